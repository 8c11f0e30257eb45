"""Text the candidate's code chose (exception messages and class names, reprs, code lines) and
the candidate-facing view, which leaves it out: a visible check's message must never carry
what the candidate's code read inside the sandbox (the job, hidden probes) back out.

Messages are composed once for instructors; where one used the candidate's text, it is
composed again under `public()`, and that text is what candidate-facing outputs show.

Facts the candidate's process reports about itself (names, shapes, counts) are its text too:
a candidate sees them only where the grader's own knowledge bounds them (`own_name`,
`own_shape`, `own_count`).
"""

from __future__ import annotations

import builtins
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

_public: ContextVar[bool] = ContextVar("public", default=False)
_used: ContextVar[list[bool] | None] = ContextVar("used", default=None)

# Names a candidate cannot forge into a message: Python's own exception and value types.
BUILTIN_NAMES = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and not name.startswith("_")
} | {"NoneType"}
SHOWN_NAMES = 8  # names the candidate's code reported, shown to them in one message
COUNTED = 16  # counts it reported, shown to them exactly up to this
INDEXES = {str(index) for index in range(COUNTED)}  # parts of names: `heads.3`


def own(full: str, public: str) -> str:
    """`full` for instructors, `public` in a candidate-facing message."""
    used = _used.get()
    if used is not None:
        used.append(True)
    return public if _public.get() else full


def own_type(name: str, what: str, known: Collection[str] = BUILTIN_NAMES) -> str:
    """A class name the candidate's code may have chosen: shown to them only if `known` (built
    in, by default), else as `what` of its own class."""
    return name if name in known else own(name, f"{what} of its own class")


def shown(name: str, known: Collection[str]) -> bool:
    """Whether a name the candidate's code reported (`heads.0.W_q.weight`) is spelled in
    `known` words and small indexes only, each of its dotted parts."""
    return all(part in known or part in INDEXES for part in name.split("."))


def own_name(name: str, known: Collection[str], other: str) -> str:
    """A name the candidate's code reported: shown to them if `shown`, else as `other`."""
    return name if shown(name, known) else own(name, other)


def own_names(names: Sequence[str], known: Collection[str]) -> str:
    """Names the candidate's code reported, joined: to them, at most `SHOWN_NAMES` of those
    `shown`, then how many others (`W_q.weight, 2 of other names`)."""
    full = ", ".join(names)
    kept = [name for name in names if shown(name, known)][:SHOWN_NAMES]
    if len(kept) == len(names):
        return full
    return own(full, ", ".join([*kept, others(len(names) - len(kept))]))


def others(count: int) -> str:
    """`one of another name`, `3 of other names`: the names a candidate is not shown."""
    return "one of another name" if count == 1 else f"{count_text(count)} of other names"


def own_shape(shape: Sequence[int], sizes: Collection[int]) -> str:
    """A shape the candidate's code reported, `(2, 8, 48)`: to them, a dimension that is not
    one of `sizes` (those the grader itself knows for the probe) as `n`: `(2, 8, n)`."""
    full = "(" + ", ".join(str(size) for size in shape) + ")"
    if all(size in sizes for size in shape):
        return full
    return own(full, "(" + ", ".join(str(s) if s in sizes else "n" for s in shape) + ")")


def own_count(count: int) -> str:
    """A count the candidate's code reported: to them, exact up to `COUNTED`."""
    return str(count) if count <= COUNTED else own(str(count), count_text(count))


def own_value(value: float) -> str:
    """A number measured on the candidate's output: to them, one significant digit and at most
    1000 either way (its digits could spell what its code read)."""
    if value != value or abs(value) >= 1e3:  # NaN, inf, and large
        coarse = "nan" if value != value else ("-" if value < 0 else "") + "1e+03"
    else:
        coarse = f"{value:.1g}"
    return own(f"{value:.3g}", coarse)


def own_row_sum(total: float) -> str:
    """A sum that should be 1, measured on the candidate's output: to them, `1 + 0.007`."""
    sign = "-" if total < 1 else "+"
    return own(f"{total:.6g}", f"1 {sign} {own_value(abs(total - 1))}")


def count_text(count: int) -> str:
    return str(count) if count <= COUNTED else f"more than {COUNTED}"


@contextmanager
def tracking() -> Iterator[list[bool]]:
    """Notes whether anything composed inside used the candidate's own text."""
    used: list[bool] = []
    token = _used.set(used)
    try:
        yield used
    finally:
        _used.reset(token)


@contextmanager
def public() -> Iterator[None]:
    token = _public.set(True)
    try:
        yield
    finally:
        _public.reset(token)


def coarse_error(error: float) -> str:
    """A largest error as a candidate sees it: one significant digit, at most 1000."""
    if not error < 1e3:  # NaN and inf too
        return "1e+03"
    return f"{error:.1g}"
