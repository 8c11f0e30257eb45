"""Grading inside Classroom 50's runner: find the problem files in the student's checkout and
grade them with the local backend, as an unprivileged account when one is given.

`autograder.py` starts the grader as root where the runner allows it (root, or sudo without a
password); the worker then runs the candidate's code as that account, with rlimits, and every
process it left is killed after each problem. Otherwise the code runs as the runner's own user,
which is no sandbox: the job's files and whatever the runner lets its user do are in its reach.
"""

from __future__ import annotations

from pathlib import Path

from grader.courses.catalog import Catalog, Problem
from grader.grade import Grader
from grader.reports.models import SubmissionReport
from grader.reports.text import num
from grader.sandboxing.backends.local import LocalBackend
from grader.selfcheck import shown_visibilities, unseen_checks
from grader.verdict.plan import draw_seed

KIT_NOTE = "graded on the visible checks only: feedback, not your grade for credit"


def run_classroom50(checkout: Path, user: str | None, catalog: Catalog) -> SubmissionReport:
    """Grade the checkout on the course's problems (a kit's with the inputs it recorded)."""
    problems = list(catalog.problems.values())
    with Grader(catalog, problems, LocalBackend(user), draw_seed(catalog.seed)) as grader:
        report = grader.grade(checkout, name=checkout.resolve().name)
    notes = (report.message, kit_note(problems) if catalog.is_kit else "")
    return report.model_copy(update={"message": "; ".join(n for n in notes if n)})


def kit_note(problems: list[Problem]) -> str:
    """What a kit's grading leaves out: the hidden checks, counted and worth what, if any."""
    unseen = unseen_checks(problems, shown_visibilities(False)).values()
    count, points = sum(c for c, _ in unseen), sum(p for _, p in unseen)
    if not count:
        return KIT_NOTE
    return f"{KIT_NOTE} ({count} hidden check(s) worth {num(points)} point(s) are not run here)"
