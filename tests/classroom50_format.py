"""Classroom 50's published `result.json` contract: its JSON schema (vendored in
tests/schemas/), and the rules the schema says it cannot express, which its runner and score
collector check in code: scores within their maximum, the total the sum of the tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA = Path(__file__).parent / "schemas" / "classroom50-result-v1.schema.json"
VALIDATOR = Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
MAX_NAME_BYTES = 100  # the declarative tests' rule, kept by the grader's names too


def validate_classroom50(result: dict[str, Any]) -> None:
    """Raise (jsonschema's ValidationError, or AssertionError) unless `result` is valid."""
    VALIDATOR.validate(result)
    tests = result["tests"]
    assert result["score"] <= result["max-score"]
    assert result["score"] == sum(t["score"] for t in tests)
    assert result["max-score"] == sum(t["max-score"] for t in tests)
    names = [t["test-name"] for t in tests]
    assert len(set(names)) == len(names), names
    for test in tests:
        assert test["score"] <= test["max-score"], test
        name = test["test-name"]
        assert len(name.encode()) <= MAX_NAME_BYTES, name
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in name), name
