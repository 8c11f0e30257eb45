"""Gradescope: `results.json` as its autograder specification describes it.

Top level: `score`, `execution_time`, `output`, `stdout_visibility`, `tests[]`; per test:
`name`, `number`, `score`, `max_score`, `status` (passed/failed), `output`, `visibility`; every
text plain (the `text` formats: a candidate's file names and messages are never markup).
Gradescope itself holds tests back by their visibility: `hidden` ones from students for good
(instructors see them), `after_due_date` ones until the due date. So every check goes out in
full, with its own visibility; the logs and the grader's error details do not.

A report with a grader fault has no results: Gradescope records whatever score a valid
`results.json` carries, with no mark that it is incomplete, so the problems the grader failed
on would count as the candidate's zero. Without the file, Gradescope says the autograder
failed to execute and records no score until the submission is regraded.
"""

from __future__ import annotations

from typing import Any

from grader.reports.models import CheckStatus, ProblemStatus, SubmissionReport
from grader.reports.redact import platform_view
from grader.reports.safe import plain
from grader.reports.tests import flat_tests
from grader.reports.text import fraction, problem_note


def gradescope_results(report: SubmissionReport) -> dict[str, Any] | None:
    """`results.json` for the report; None when the grader failed on any of its problems."""
    if report.grader_fault:
        return None
    view = platform_view(report)
    tests = [
        {
            "name": t.name,
            "number": t.number,
            "score": t.score,
            "max_score": t.max_score,
            "status": "passed" if t.status is CheckStatus.passed else "failed",
            "output": t.output,
            "visibility": t.visibility.value,
        }
        for t in flat_tests(view)
    ]
    lines = [f"{view.submission}: {fraction(view.total, view.max_total)}"]
    if view.message:
        lines.append(view.message)
    lines += [
        f"{p.problem}: {problem_note(p)}"
        for p in view.problems
        if p.status not in (ProblemStatus.graded, ProblemStatus.not_attempted)
    ]
    return {
        "score": view.total,
        "execution_time": round(view.run.seconds or 0.0),
        "output": plain("\n".join(lines)),
        "output_format": "text",
        "test_output_format": "text",
        "test_name_format": "text",
        "stdout_visibility": "hidden",
        "tests": tests,
    }
