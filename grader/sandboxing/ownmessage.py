"""An exception's message as the candidate whose code raised it may see it.

The candidate's code chose the message, and could spell in it what it read in the sandbox
(hidden inputs, a hidden config's sizes). So a candidate-facing view shows a message only in a
form the grader knows: one of Python's and torch's own messages (`TEMPLATES`), or one of the
candidate's own string literals (an f-string's text, a `str.format` template), as the host
reads them in the files handed in. What fills a form's places is shown where the grader can
bound it: a name whose every dotted part is one of `Known.names` (the candidate's identifiers,
the contract's and torch's names), a number that is a size the grader knows for the probe or
below `SMALL` (a dimension, a count of arguments); anything else reads `…`, and at most
`SHOWN_WORDS` names and numbers are shown in one message. A message of no known form is not
shown: the instructor's report and the candidate's own `grader check` have it in full.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

import torch

from grader.sandboxing.owntext import BUILTIN_NAMES, SHOWN_NAMES

Template = tuple[str, ...]
"""A message's form: its literal text, split where a place is filled in (`("No module named '",
"'")`): one place between each two literals."""

SMALL = 8  # numbers below it are shown whatever they count: dimensions, arguments
SHOWN_WORDS = SHOWN_NAMES  # names and numbers of a message shown, as of a module's names
MAX_CHARS = 300  # of the message's first line
MAX_PLACES = 4  # places of one of the candidate's own templates
MAX_TEMPLATE = 300  # characters of one of the candidate's own literals taken as a template
HIDDEN = "…"
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|[0-9]+|\s+|.", re.DOTALL)
PUNCTUATION = set(" '\"()[]{},.:;=<>!?+-*/%@|&^~`")
FORMAT_FIELD = re.compile(r"\{[^{}]*\}")


def template(text: str) -> Template:
    """`"{}() got an unexpected keyword argument '{}'"` as a Template."""
    return tuple(text.split("{}"))


TEMPLATES: tuple[Template, ...] = tuple(
    template(text)
    for text in (
        # Python's
        "{}() got an unexpected keyword argument '{}'",
        "{}() got multiple values for argument '{}'",
        "{}() missing {} required positional argument: {}",
        "{}() missing {} required positional arguments: {}",
        "{}() missing {} required keyword-only argument: {}",
        "{}() takes {} positional argument but {} were given",
        "{}() takes {} positional arguments but {} were given",
        "{}() takes {} positional arguments but {} was given",
        "{}() takes from {} to {} positional arguments but {} were given",
        "No module named '{}'",
        "cannot import name '{}' from '{}' ({})",
        "cannot import name '{}' from partially initialized module '{}' ({})",
        "name '{}' is not defined",
        "'{}' object has no attribute '{}'",
        "type object '{}' has no attribute '{}'",
        "module '{}' has no attribute '{}'",
        "'{}' object is not callable",
        "'{}' object is not subscriptable",
        "'{}' object is not iterable",
        "'{}' object does not support item assignment",
        "unsupported operand type(s) for {}: '{}' and '{}'",
        "cannot access local variable '{}' where it is not associated with a value",
        "local variable '{}' referenced before assignment",
        "too many values to unpack (expected {})",
        "not enough values to unpack (expected {}, got {})",
        "list index out of range",
        "tuple index out of range",
        "division by zero",
        "float division by zero",
        "integer division or modulo by zero",
        "math domain error",
        # torch's
        "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
        "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton "
        "dimension {}",
        "shape '[{}]' is invalid for input of size {}",
        "Dimension out of range (expected to be in range of [{}, {}], but got {})",
        "expected scalar type {} but found {}",
        "expected m1 and m2 to have the same dtype, but got: {} != {}",
        "view size is not compatible with input tensor's size and stride (at least one "
        "dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
        "number of dims don't match in permute",
        "Expected all tensors to be on the same device, but found at least two devices, {}!",
        "{}: Expected size for first two dimensions of batch2 tensor to be: [{}] but got: [{}].",
        "Expected size for first two dimensions of batch2 tensor to be: [{}] but got: [{}].",
        "{}(): argument '{}' (position {}) must be {}, not {}",
        "{}(): argument '{}' must be {}, not {}",
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: {}",
        "element {} of tensors does not require grad and does not have a grad_fn",
    )
)

LIBRARY = frozenset(
    BUILTIN_NAMES
    | {name for name in dir(torch) if not name.startswith("_")}
    | {name for name in dir(torch.nn) if not name.startswith("_")}
    | {name for name in dir(torch.nn.functional) if not name.startswith("_")}
    | {name for name in dir(torch.Tensor) if not name.startswith("_")}
    | {"Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Bool", "Byte", "Char"}
    | {"x", "and", "or", "self", "forward", "__init__", "__call__", "mat1", "mat2"}
)
"""Names of the grader's own vocabulary: Python's types, torch's names, its scalar types."""


@dataclass(frozen=True)
class Known:
    """What the grader can bound in an exception's message (`shown_message`): the names it may
    show, the sizes it knows for the probe, and the forms of the candidate's own literals."""

    names: Collection[str] = frozenset()
    sizes: Collection[int] = frozenset()
    templates: Sequence[Template] = ()


def literal_templates(literals: Iterable[str | list[str | None]]) -> list[Template]:
    """The candidate's own message forms: each string constant (its `{...}` fields places) and
    each f-string (its text, None where a value is formatted in), up to `MAX_PLACES` places."""
    found: list[Template] = []
    for literal in literals:
        if isinstance(literal, str):
            parts = tuple(FORMAT_FIELD.split(literal))
        else:
            joined: list[str] = [""]
            for piece in literal:
                if piece is None:
                    if joined[-1] or len(joined) == 1:  # adjacent places are one place
                        joined += [""]
                else:
                    joined[-1] += piece
            parts = tuple(joined)
        size = sum(map(len, parts))
        if 0 < size <= MAX_TEMPLATE and len(parts) - 1 <= MAX_PLACES:
            found.append(parts)
    return found


def fill(form: Template, message: str) -> list[str] | None:
    """What fills each place of `form` in `message`, or None where `message` is not of that form.
    Each literal is found leftmost, without backtracking (linear in the message)."""
    first, last = form[0], form[-1]
    if len(form) == 1:
        return [] if message == first else None
    if not message.startswith(first) or not message.endswith(last):
        return None
    end = len(message) - len(last)
    if end < len(first):
        return None
    places, at = [], len(first)
    for literal in form[1:-1]:
        found = message.find(literal, at, end) if literal else at
        if found < 0:
            return None
        places.append(message[at:found])
        at = found + len(literal)
    places.append(message[at:end])
    return places


def bounded(place: str, known: Known, budget: list[int]) -> str:
    """A place's text as the candidate sees it: names and numbers the grader can bound while
    `budget` lasts (a name costs one a dotted part), punctuation and spaces; anything else `…`."""
    out: list[str] = []
    for token in TOKEN.findall(place):
        if token.isdigit():
            ok, cost = int(token) < SMALL or int(token) in known.sizes, 1
        elif token[0].isalpha() or token[0] == "_":
            parts = token.split(".")
            ok, cost = all(p in known.names or p in LIBRARY for p in parts), len(parts)
        else:
            ok, cost = token.isspace() or token in PUNCTUATION, 0
        ok = ok and cost <= budget[0]
        budget[0] -= cost if ok else 0
        out.append(token if ok else HIDDEN)
    return re.sub(f"{HIDDEN}+", HIDDEN, "".join(out))


def shown_message(message: str, known: Known) -> str:
    """The first line of `message` as the candidate may see it, or "" where it has no form the
    grader knows (module docstring)."""
    line = message.strip().splitlines()[0][:MAX_CHARS] if message.strip() else ""
    if not line:
        return ""
    for form in (*TEMPLATES, *known.templates):
        places = fill(form, line)
        if places is None:
            continue
        budget = [SHOWN_WORDS]
        text = form[0]
        for place, literal in zip(places, form[1:], strict=True):
            text += bounded(place, known, budget) + literal
        return text
    return ""
