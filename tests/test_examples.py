"""The shipped example submissions get exactly their expected scores through the pipeline."""

from __future__ import annotations

from collections.abc import Callable

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.models import CheckStatus, ProblemStatus
from tests import whole
from tests.conftest import ROOT

PROBLEMS = ["split_heads", "causal_self_attention", "mha_by_loop"]
PARTIAL = {
    "classic_mistakes": {"split_heads": 6, "causal_self_attention": 10, "mha_by_loop": 3},
    "partly_attempted": {"split_heads": 13, "causal_self_attention": 16},
}


def test_examples_get_their_expected_scores(
    catalog: Catalog, make_grader: Callable[..., Grader]
) -> None:
    """`complete` holds all eleven problems and scores full marks; the others what they earn."""
    expected = {
        "complete": {p.spec.id: p.spec.max_score for p in catalog.problems.values()},
        **{
            name: {p: scores.get(p, 0) for p in catalog.problems}
            for name, scores in PARTIAL.items()
        },
    }
    names = sorted(expected)
    reports = make_grader().grade_many([ROOT / "submissions" / n for n in names], jobs=2)
    for name, report in zip(names, reports, strict=True):
        scores = {p.problem: p.score for p in report.problems}
        assert scores == expected[name], (name, [p.model_dump() for p in report.problems])
        assert not report.grader_fault
    complete = reports[names.index("complete")]
    assert complete.total == complete.max_total == whole.full_marks(catalog)


def test_bob_is_told_his_mistakes(make_grader: Callable[..., Grader]) -> None:
    report = make_grader(PROBLEMS).grade(ROOT / "submissions" / "classic_mistakes")
    mistakes = {
        p.problem: {c.diagnosis.mistake for c in p.checks if c.diagnosis and c.diagnosis.mistake}
        for p in report.problems
    }
    assert mistakes == {
        "split_heads": {"view_no_transpose"},
        "causal_self_attention": {"scale_sqrt_c"},
        "mha_by_loop": {"no_causal_mask"},
    }
    causal = report.problem("mha_by_loop").checks
    message = next(c.message for c in causal if c.name.startswith("causal"))
    assert "attend to the future" in message


def test_partly_attempted_statuses(make_grader: Callable[..., Grader]) -> None:
    report = make_grader(PROBLEMS).grade(ROOT / "submissions" / "partly_attempted")
    assert report.problem("mha_by_loop").status is ProblemStatus.not_attempted
    raises = [c for c in report.problem("causal_self_attention").checks if c.check == "raises"]
    assert raises[0].status is CheckStatus.failed
    assert "did not raise" in raises[0].message
