"""A visible check's message in a candidate-facing view never carries text the candidate's
code chose; the instructor's report keeps all of it."""

from __future__ import annotations

from collections.abc import Callable

from grader.grade import Grader
from grader.reports.redact import candidate_view, platform_view
from tests.conftest import ROOT


def test_candidate_views_leave_out_the_candidates_own_text(
    make_grader: Callable[..., Grader],
) -> None:
    report = make_grader(["split_heads"]).grade(ROOT / "tests" / "hostile" / "carries_text")
    full = report.problem("split_heads")
    messages = " ".join(c.message for c in full.checks)
    assert "SECRET-MESSAGE" in messages and "SECRET-REPR" in messages  # instructors see it
    for view in (candidate_view(report), platform_view(report)):
        shown = view.problem("split_heads")
        text = shown.model_dump_json()
        assert "SECRET" not in text, text
        said = " ".join(c.message for c in shown.checks)
        assert "an exception of its own class at split_heads.py:15" in said
        assert "an object of its own class" in said
