"""The scoring rules of GitHub Classroom's `autograding-grading-reporter` (v1, its public
source: src/helpers/test-helpers.js, src/console-results.js, src/notify-classroom.js),
written again in Python to apply them to our output."""

from __future__ import annotations

from typing import Any


def logged_score(result: dict[str, Any]) -> float:
    """What the job log prints: passed tests over all tests, times the runner's max_score
    (`getTestScore`)."""
    tests = result["tests"]
    passed = sum(1 for t in tests if t["status"] == "pass")
    return passed / len(tests) * (result.get("max_score") or 0)


def recorded_score(result: dict[str, Any]) -> tuple[float, float]:
    """What Classroom records: the tests' `score` summed, against `max_score`
    (`NotifyClassroom`)."""
    if not result.get("max_score"):
        return 0.0, 0.0
    return sum(t["score"] for t in result["tests"]), result["max_score"]
