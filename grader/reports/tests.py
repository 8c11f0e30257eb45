"""A report as a flat list of tests, for the platforms that count tests (Classroom, Gradescope):
their names and outputs plain text (`safe.plain`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from grader.reports.models import CheckReport, CheckStatus, ProblemReport, SubmissionReport
from grader.reports.safe import plain
from grader.reports.text import check_details, problem_note, scored, zeroed_pass
from grader.specs.problem import Visibility


@dataclass(frozen=True)
class FlatTest:
    number: str
    name: str
    status: CheckStatus
    score: float
    max_score: float
    output: str
    visibility: Visibility
    filename: str


def flat_tests(view: SubmissionReport) -> Iterator[FlatTest]:
    """One test per check. A problem without checks (not attempted) is one failed test; in a
    problem that scores 0 (`ProblemStatus.zeroes`) every check scores 0, one that passed is
    failed, and each says why."""
    for p_index, problem in enumerate(view.problems, start=1):
        filename = plain(f"{problem.problem}.py")
        note = problem_note(problem)
        if not problem.checks:
            yield FlatTest(
                str(p_index),
                plain(f"{problem.problem}: {problem.status.text}"),
                CheckStatus.failed,
                0.0,
                problem.max_score,
                plain(note),
                Visibility.visible,
                filename,
            )
            continue
        zeroed = problem.status.zeroes
        for c_index, check in enumerate(problem.checks, start=1):
            lines = check_details(check)
            if zeroed:
                lines.insert(0, note)
            yield FlatTest(
                f"{p_index}.{c_index}",
                plain(f"{problem.problem}: {check.name}"),
                counted_status(problem, check),
                scored(problem, check),
                check.max_points,
                plain("\n".join(lines)),
                check.visibility,
                filename,
            )


def counted_status(problem: ProblemReport, check: CheckReport) -> CheckStatus:
    """The check's status as a platform counts it: a pass that scores 0 is a failure."""
    if zeroed_pass(problem, check):
        return CheckStatus.failed
    return check.status
