"""A visible check's message in a candidate-facing view never carries text the candidate's
code chose; the instructor's report keeps all of it."""

from __future__ import annotations

from collections.abc import Callable

from grader.grade import Grader
from grader.reports.redact import candidate_view, platform_view
from grader.sandboxing import owntext
from grader.sandboxing.results import REFUSED, ErrorInfo, Frame
from sandbox.policy import REFUSAL, Refused
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


def test_a_refused_call_reads_as_the_grader_s_refusal() -> None:
    """The guard's `Refused` is the grader's refusal, never the candidate's own exception; what
    it refused and the code reach instructors only."""
    error = ErrorInfo(
        stage="call",
        call=0,
        type=Refused.__name__,
        message="torch's operator aten::scaled_dot_product_attention" + REFUSAL,
        frames=[Frame(file="attn.py", line=3, code="y = F.scaled_dot_product_attention(q, k, v)")],
    )
    full = error.summary({"attn.py": 5})
    with owntext.public():
        public = error.summary({"attn.py": 5})
    assert full == (
        f"{REFUSED} (torch's operator aten::scaled_dot_product_attention) at attn.py:3 "
        "`y = F.scaled_dot_product_attention(q, k, v)`"
    )
    assert public == f"{REFUSED} at attn.py:3"
