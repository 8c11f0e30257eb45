"""The local backend hides the host environment and kills runaway process groups."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from grader.grade import Grader


def test_environment_is_scrubbed(
    tmp_path: Path, make_grader: Callable[..., Grader], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRADER_TEST_SECRET", "do-not-leak")
    (tmp_path / "split_heads.py").write_text(
        "import os\nprint(dict(os.environ))\n\n"
        "def split_heads(x, n):\n    return x\n\n\ndef merge_heads(x):\n    return x\n"
    )
    problem = make_grader(["split_heads"]).grade(tmp_path).problem("split_heads")
    assert "HOME" in problem.stdout
    assert "do-not-leak" not in problem.stdout
    assert "GRADER_TEST_SECRET" not in problem.stdout
    assert os.environ["GRADER_TEST_SECRET"] == "do-not-leak"
