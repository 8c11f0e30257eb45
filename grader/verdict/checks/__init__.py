"""The reusable check library: every check a problem spec may declare, by id."""

from grader.verdict.checks import (
    heads,
    modules,
    sdpa,
    source,
    structure,
    training,
    values,
    weights,
)
from grader.verdict.checks.base import CHECKS, Check, Context, Failure, Verdict, register

__all__ = [
    "CHECKS",
    "Check",
    "Context",
    "Failure",
    "Verdict",
    "heads",
    "modules",
    "register",
    "sdpa",
    "source",
    "structure",
    "training",
    "values",
    "weights",
]
