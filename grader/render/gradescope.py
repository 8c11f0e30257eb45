"""Gradescope: `results.json` as its autograder specification describes it.

Top level: `score`, `execution_time`, `output`, `stdout_visibility`, `tests[]`; per test:
`name`, `number`, `score`, `max_score`, `status` (passed/failed), `output`, `visibility`.
Render it from a candidate's view built with `reveal_after_due=True`: Gradescope itself holds
`after_due_date` tests back until the due date; hidden checks arrive already redacted.
"""

from __future__ import annotations

from typing import Any

from grader.render.tests import flat_tests
from grader.render.text import fraction, problem_note
from grader.report import CheckStatus, ProblemStatus, SubmissionReport


def gradescope_results(view: SubmissionReport) -> dict[str, Any]:
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
        "output": "\n".join(lines),
        "stdout_visibility": "hidden",
        "tests": tests,
    }
