"""The reusable check library: every check a problem spec may declare, by id."""

from grader.checks import source, structure, training, values
from grader.checks.base import CHECKS, Check, Context, Failure, Verdict, register

__all__ = ["CHECKS", "Check", "Context", "Failure", "Verdict", "register", "source",
           "structure", "training", "values"]
