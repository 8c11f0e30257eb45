"""Attention patterns: what a failing causality or weights check shows, the candidate's beside
the reference's, in the report, in the candidate's view and drawn in a browser."""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.html import render_feedback_html
from grader.reports.models import AttentionPattern, SubmissionReport
from grader.reports.redact import candidate_view, coarse_grid
from grader.verdict.patterns import influence
from tests import whole
from tests.test_html_browser import WIDTH, browse

MUTANTS = {
    "causal_self_attention": "no_causal_mask",  # tokens see the future
    "mha_with_weights": "mask_inverted",  # weight only where the mask blocks
}


def test_influence_of_a_causal_function_is_lower_triangular() -> None:
    x = torch.randn(2, 6, 3)

    def causal(t: torch.Tensor) -> torch.Tensor:
        return t.cumsum(dim=1)

    moved = []
    for token in range(6):
        changed = x.clone()
        changed[:, token] += 1.0
        moved.append(causal(changed))
    spread = influence(causal(x), moved)
    assert spread.shape == (6, 6)
    assert float(spread.max()) == 1.0
    past = torch.ones(6, 6).tril().bool()
    assert bool((spread[~past] == 0).all()) and bool((spread[past] > 0).all())


@pytest.fixture(scope="module")
def report(
    tmp_path_factory: pytest.TempPathFactory, catalog: Catalog, make_grader: Callable[..., Grader]
) -> SubmissionReport:
    """A whole submission: every reference, but two problems replaced by known mistakes."""
    folder = whole.references(catalog, tmp_path_factory.mktemp("class") / "two_mistakes")
    for problem, mutant in MUTANTS.items():
        entry = catalog.problems[problem]
        shutil.copyfile(entry.folder / "mutants" / f"{mutant}.py", folder / entry.spec.entry)
    return make_grader().grade(folder)


def patterns(report: SubmissionReport) -> dict[tuple[str, str], AttentionPattern]:
    return {(p.problem, c.check): c.pattern for p in report.problems for c in p.checks if c.pattern}


def test_patterns_only_where_a_check_about_attention_failed(report: SubmissionReport) -> None:
    found = patterns(report)
    assert {problem for problem, _ in found} == set(MUTANTS)
    assert all(c.status.value == "failed" for p in report.problems for c in p.checks if c.pattern)


def test_tokens_that_see_the_future_are_drawn(report: SubmissionReport) -> None:
    pattern = patterns(report)[("causal_self_attention", "causality")]
    assert pattern.kind == "influence" and len(pattern.got) == len(pattern.expected) == 1
    expected, got = torch.tensor(pattern.expected[0]), torch.tensor(pattern.got[0])
    assert expected.shape == got.shape == (8, 8)
    assert bool((expected.triu(1) == 0).all())  # the reference: only the past
    assert float(got.triu(1).max()) > 0.1  # the candidate's: the future too
    assert "n_head=4" in pattern.config


def test_an_inverted_mask_is_drawn_per_head(report: SubmissionReport) -> None:
    pattern = patterns(report)[("mha_with_weights", "mask_respected")]
    assert pattern.kind == "weights" and len(pattern.got) == len(pattern.expected) == 4
    for got, want in zip(pattern.got, pattern.expected, strict=True):
        assert torch.tensor(got).shape == torch.tensor(want).shape
        assert not torch.allclose(torch.tensor(got), torch.tensor(want))


def test_the_candidate_sees_patterns_of_visible_checks_only(report: SubmissionReport) -> None:
    view = candidate_view(report)
    for problem in view.problems:
        for check in problem.checks:
            if check.visibility.value != "visible":
                assert check.pattern is None
    shown, full = patterns(view), patterns(report)
    assert shown.keys() == full.keys()  # both checks are visible ones
    for key, pattern in full.items():  # the candidate's own values in steps of 0.1
        assert shown[key].expected == pattern.expected
        assert shown[key].got == [coarse_grid(grid) for grid in pattern.got]
    assert any(shown[key].got != pattern.got for key, pattern in full.items())
    assert json.loads(report.model_dump_json())  # the pattern survives JSON (no NaN)
    assert SubmissionReport.model_validate_json(report.model_dump_json()) == report


PROBE = """<script>
const figures = [...document.querySelectorAll("tr.pattern svg")].map((e) => {
  const b = e.getBoundingClientRect(); return [b.left, b.right, b.width, b.height]; });
const out = document.createElement("pre");
out.id = "probe";
out.textContent = JSON.stringify({figures, page: document.documentElement.scrollWidth});
document.body.append(out);
</script>"""


def test_the_candidate_feedback_page_draws_both_patterns(
    tmp_path: Path, report: SubmissionReport
) -> None:
    page = tmp_path / "feedback.html"
    text = render_feedback_html(candidate_view(report))
    page.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = browse(page, tmp_path / "profile", "--dump-dom")
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    measured = json.loads(html.unescape(found.group(1)))
    assert measured["page"] <= WIDTH
    assert len(measured["figures"]) == 2
    for left, right, width, height in measured["figures"]:
        assert left >= 0 and right <= WIDTH and width > 300 and height > 150
