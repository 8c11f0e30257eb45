"""The candidate's view of a report: what a candidate-facing output may show.

Withheld checks (always `hidden`; `after_due_date` until revealed) keep their status and
points, so totals add up, but lose their name, message and diagnosis. Shown checks show their
public message where the full one carries the candidate code's own text
(`grader.sandboxing.owntext`).
The candidate code's logs and the grader's own error details are for instructors only. A
platform that holds checks back by their visibility itself (Gradescope) gets every check in
full: `platform_view`.
"""

from __future__ import annotations

from collections.abc import Callable

from grader.reports.models import (
    CheckReport,
    Grid,
    ProblemReport,
    ProblemStatus,
    SubmissionReport,
)
from grader.sandboxing.owntext import coarse_error
from grader.specs.problem import Visibility

GRADER_FAULT = "the grader failed here (not your fault): your instructor's report has the details"
WITHHELD = "withheld"  # the `check` field of a withheld check in a candidate's view
Withhold = Callable[[CheckReport], bool]


def withheld(check: CheckReport, reveal_after_due: bool) -> bool:
    if check.visibility is Visibility.hidden:
        return True
    return check.visibility is Visibility.after_due_date and not reveal_after_due


def withheld_name(visibility: Visibility, number: int) -> str:
    if visibility is Visibility.hidden:
        return f"hidden check {number}"
    return f"check {number} (shown after the due date)"


def redact_problem(problem: ProblemReport, withhold: Withhold, own_text: bool) -> ProblemReport:
    checks = []
    count = 0
    for check in problem.checks:
        if withhold(check):
            count += 1
            check = check.model_copy(
                update={
                    "name": withheld_name(check.visibility, count),
                    "check": WITHHELD,
                    "message": "",
                    "diagnosis": None,
                    "pattern": None,
                }
            )
        elif not own_text:
            check = public_check(check)
        checks.append(check.model_copy(update={"public_message": None}))
    public = problem.public_message
    message = problem.message if own_text or public is None else public
    if problem.status is ProblemStatus.grader_error:
        message = GRADER_FAULT
    return problem.model_copy(
        update={
            "checks": checks,
            "message": message,
            "public_message": None,
            "stdout": "",
            "stderr": "",
        }
    )


def public_check(check: CheckReport) -> CheckReport:
    """A shown check as a candidate sees it: its public message, its largest error to one
    significant digit, at most 1000, and its pattern in steps of 0.1 from -1 to 2 (the
    candidate's code chose the values measured, and could spell hidden inputs in their digits)."""
    update: dict[str, object] = {}
    if check.public_message is not None:
        update["message"] = check.public_message
    if check.pattern is not None:
        got = [coarse_grid(grid) for grid in check.pattern.got]
        update["pattern"] = check.pattern.model_copy(update={"got": got})
    diagnosis = check.diagnosis
    if diagnosis is not None and diagnosis.max_error is not None:
        coarse = float(coarse_error(diagnosis.max_error))
        update["diagnosis"] = diagnosis.model_copy(update={"max_error": coarse})
    return check.model_copy(update=update) if update else check


def coarse_grid(grid: Grid) -> Grid:
    return [[None if v is None else round(min(max(v, -1.0), 2.0), 1) for v in row] for row in grid]


def redacted(
    report: SubmissionReport, withhold: Withhold, own_text: bool = False
) -> SubmissionReport:
    copy = report.model_copy(deep=True)
    message = GRADER_FAULT if copy.message.startswith("grader error") else copy.message
    problems = [redact_problem(p, withhold, own_text) for p in copy.problems]
    return copy.model_copy(update={"problems": problems, "message": message})


def candidate_view(
    report: SubmissionReport, reveal_after_due: bool = False, own_text: bool = False
) -> SubmissionReport:
    """A redacted deep copy of `report`: render every candidate-facing output from it.
    `own_text` keeps the text the candidate's code chose (their own run of `grader check`)."""
    return redacted(report, lambda check: withheld(check, reveal_after_due), own_text)


def platform_view(report: SubmissionReport) -> SubmissionReport:
    """Every check in full, each with its visibility, for a platform that shows candidates only
    what that visibility allows; the logs and the grader's error details are still removed."""
    return redacted(report, lambda check: False)


def withheld_points(problem: ProblemReport) -> tuple[int, float]:
    """How many checks of a candidate's view are withheld, and what they are worth."""
    hidden = [c for c in problem.checks if c.check == WITHHELD]
    return len(hidden), sum(c.max_points for c in hidden)
