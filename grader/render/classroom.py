"""GitHub Classroom: the result a runner hands to `autograding-grading-reporter`.

The reporter reads, per runner, the base64 of a JSON object with `version`, `status`
(pass/fail/error), `max_score` and `tests[]` (`name`, `status`, `score`, `message`,
`test_code`, `filename`, `line_no`, `duration`), the fields its own command grader writes.
It adds up the tests' `score` against `max_score` for the grade.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from grader.render.tests import flat_tests
from grader.report import CheckStatus, SubmissionReport

STATUS = {
    CheckStatus.passed: "pass",
    CheckStatus.failed: "fail",
    CheckStatus.error: "error",
    CheckStatus.skipped: "fail",
}


def classroom_result(view: SubmissionReport) -> dict[str, Any]:
    """The runner result for a candidate's (redacted) view of a report."""
    tests = [
        {
            "name": t.name,
            "status": STATUS[t.status],
            "score": t.score,
            "max_score": t.max_score,
            "message": t.output,
            "test_code": "",
            "filename": t.filename,
            "line_no": 0,
            "duration": 0,
        }
        for t in flat_tests(view)
    ]
    if view.grader_fault:
        status = "error"
    else:
        status = "pass" if all(t["status"] == "pass" for t in tests) else "fail"
    return {"version": 1, "status": status, "max_score": view.max_total, "tests": tests}


def encode_result(result: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(result, separators=(",", ":")).encode()).decode()
