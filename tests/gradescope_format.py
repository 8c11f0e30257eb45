"""Gradescope's published format of `results.json` (its autograder specifications): the known
fields at the top and in each test, their types, and the values it accepts."""

from __future__ import annotations

from typing import Any

NUMBER: tuple[type, ...] = (int, float)

Types = type | tuple[type, ...]
GRADESCOPE_TOP: dict[str, Types] = {
    "score": NUMBER,
    "execution_time": NUMBER,
    "output": str,
    "output_format": str,
    "test_output_format": str,
    "test_name_format": str,
    "visibility": str,
    "stdout_visibility": str,
    "extra_data": dict,
    "tests": list,
    "leaderboard": list,
}
GRADESCOPE_TEST: dict[str, Types] = {
    "score": NUMBER,
    "max_score": NUMBER,
    "status": str,
    "name": str,
    "name_format": str,
    "number": str,
    "output": str,
    "output_format": str,
    "tags": list,
    "visibility": str,
    "extra_data": dict,
}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
FORMATS = {"text", "html", "simple_format", "md", "ansi"}


def validate_gradescope(results: dict[str, Any]) -> None:
    """Gradescope's autograder specification: known fields, their types and values."""
    for key, value in results.items():
        assert isinstance(value, GRADESCOPE_TOP[key]), key
    assert "score" in results or all("score" in t for t in results["tests"])
    for key in ("visibility", "stdout_visibility"):
        assert results.get(key, "visible") in VISIBILITY
    for key in ("output_format", "test_output_format", "test_name_format"):
        assert results.get(key, "text") in FORMATS
    for test in results.get("tests", []):
        for key, value in test.items():
            assert isinstance(value, GRADESCOPE_TEST[key]), key
        assert test.get("status", "passed") in ("passed", "failed")
        assert test.get("visibility", "visible") in VISIBILITY
        for key in ("output_format", "name_format"):
            assert test.get(key, "text") in FORMATS
        assert 0 <= test["score"] <= test["max_score"]
