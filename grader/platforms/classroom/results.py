"""GitHub Classroom: the result a runner hands to `autograding-grading-reporter`.

The reporter reads, per runner, the base64 of a JSON object with `version`, `status`
(pass/fail/error), `max_score` and `tests[]` (`name`, `status`, `score`, `message`,
`test_code`, `filename`, `line_no`, `duration`). It records the sum of the tests' `score`
against `max_score`, but its log weighs every test alike (passed tests / all tests *
`max_score`). So that both say the same, each check is sent as equal units of points: a
3-point check is three 1-point tests, passed as far as the check scored.

After a grader fault the result's `max_score` is 0 and its status `error`: the reporter then
posts no points (it skips a runner without `max_score`) and fails the job, so the problems the
grader failed on never count as the candidate's zero; the tests still say what ran.
"""

from __future__ import annotations

import base64
import json
import math
from fractions import Fraction
from typing import Any

from grader.reports.models import CheckStatus, SubmissionReport
from grader.reports.tests import FlatTest, flat_tests

FAILED = {CheckStatus.error: "error"}  # any other status that did not score: fail


def point_unit(tests: list[FlatTest]) -> Fraction:
    """The largest amount of points every test's worth is a whole number of."""
    worths = [Fraction(t.max_score).limit_denominator(1000) for t in tests if t.max_score > 0]
    if not worths:
        return Fraction(1)
    denominator = math.lcm(*(w.denominator for w in worths))
    return Fraction(math.gcd(*(int(w * denominator) for w in worths)), denominator)


def unit_tests(test: FlatTest, unit: Fraction) -> list[dict[str, Any]]:
    count = round(Fraction(test.max_score).limit_denominator(1000) / unit)
    scored = round(Fraction(test.score).limit_denominator(1000) / unit)
    return [
        {
            "name": test.name if count == 1 else f"{test.name} ({i}/{count})",
            "status": "pass" if i <= scored else FAILED.get(test.status, "fail"),
            "score": float(unit) if i <= scored else 0.0,
            "max_score": float(unit),
            "message": test.output,
            "test_code": "",
            "filename": test.filename,
            "line_no": 0,
            "duration": 0,
        }
        for i in range(1, count + 1)
    ]


def classroom_result(view: SubmissionReport) -> dict[str, Any]:
    """The runner result for a candidate's (redacted) view of a report: no points to post
    after a grader fault."""
    flat = list(flat_tests(view))
    unit = point_unit(flat)
    tests = [t for test in flat for t in unit_tests(test, unit)]
    if view.grader_fault:
        return {"version": 1, "status": "error", "max_score": 0, "tests": tests}
    status = "pass" if all(t["status"] == "pass" for t in tests) else "fail"
    return {"version": 1, "status": status, "max_score": view.max_total, "tests": tests}


def encode_result(result: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(result, separators=(",", ":")).encode()).decode()
