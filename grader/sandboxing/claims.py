"""Which problem each of a notebook's definitions of a name is for, where problems share the
name (the contract names problem 5's class and problem 7's `MultiHeadAttention`, problems 9 and
10's `CausalSelfAttention`), decided by the keywords the grader builds each problem's class with.

A class fits a problem when its `__init__` takes every keyword the problem's configurations pass
and asks for no other; it is the problem's, of those sharing the name, that it fits with the most
keywords (a class taking `flash` is problem 10's, one that does not is problem 9's). Where that
says nothing (no `__init__` of its own, a `**kwargs`, a name not made by `class` or `def`), a
definition is nobody's in particular: the first problem left takes the last of them.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grader.specs.problem import ProblemSpec


@dataclass(frozen=True)
class Wanted:
    """What a problem's entry file must define, and the keywords its class is built with."""

    names: tuple[str, ...]
    keywords: frozenset[str] = frozenset()


def wanted(spec: ProblemSpec) -> Wanted:
    keywords = {k for c in spec.configs for k in (c.init or {})} if spec.kind == "module" else ()
    return Wanted(tuple(spec.symbols), frozenset(keywords))


@dataclass
class Claims:
    """For each problem (by entry file) sharing a name, the definition it is graded on, by its
    place among the module's (None: not made of this module), and whether the contract decided
    it."""

    chosen: dict[str, int | None] = field(default_factory=dict)
    decided: bool = False


def fits(definition: ast.stmt, keywords: frozenset[str]) -> bool | None:
    """Whether a class can be built with exactly `keywords`; None when its source cannot say."""
    if not isinstance(definition, ast.ClassDef):
        return None
    init = [s for s in definition.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"]
    if not init or init[-1].args.kwarg is not None:
        return None
    args = init[-1].args
    named = args.args[1:]  # after `self`
    required = {a.arg for a in named[: len(named) - len(args.defaults)]}
    required |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None}
    taken = {a.arg for a in named} | {a.arg for a in args.kwonlyargs}
    return keywords <= taken and required <= keywords


def claim(definitions: Sequence[ast.stmt], problems: dict[str, Wanted]) -> Claims:
    """Each problem's definition among a module's `definitions` of a name that `problems` (by
    entry file, in the catalog's order) share: a definition is the problem's it fits best, and a
    problem is graded on the last of its own; definitions no contract decides go, the last of
    them, to the first problem without one."""
    claims = Claims(dict.fromkeys(problems))
    unclaimed = []
    for at, definition in enumerate(definitions):
        fitting = [e for e, w in problems.items() if fits(definition, w.keywords)]
        if fitting:
            best = max(fitting, key=lambda e: len(problems[e].keywords))
            claims.chosen[best] = at
            claims.decided = True
        else:
            unclaimed.append(at)
    left = [entry for entry, chosen in claims.chosen.items() if chosen is None]
    if unclaimed and left:
        claims.chosen[left[0]] = unclaimed[-1]
    return claims
