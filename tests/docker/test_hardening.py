"""Attacks written against the grader's own design, in the real sandbox: each hostile submission
is graded beside the complete example, which must keep full marks, and leaves no container."""

from __future__ import annotations

import time

import pytest

from grader.backends.docker import DockerBackend
from grader.catalog import Catalog
from grader.grade import Grader
from grader.report import ProblemStatus, SubmissionReport
from tests.conftest import ROOT

pytestmark = pytest.mark.docker

HOSTILE = ROOT / "tests" / "hostile"
CONTROL = ROOT / "submissions" / "complete"


def grade_beside_the_control(image: str, attack: str) -> tuple[SubmissionReport, float]:
    """The attack's report and the batch's wall time; the control must score 177/177."""
    catalog = Catalog()
    grader = Grader(catalog, list(catalog.problems.values()), DockerBackend(image), seed=3)
    start = time.monotonic()
    try:
        report, control = grader.grade_many([HOSTILE / attack, CONTROL], jobs=2)
    finally:
        grader.close()
    assert control.total == control.max_total == 177, control.problems
    assert not report.grader_fault, report.problems
    return report, time.monotonic() - start


@pytest.mark.parametrize(
    ("attack", "reason"),
    [("deep_json", "nested too deeply"), ("many_tensors", "over")],
)
def test_unreadable_results_are_the_candidates_crash(
    sandbox_image: str, attack: str, reason: str
) -> None:
    """A probe file nested 100000 deep, or a 62 MB safetensors header of 1.1 M tensors."""
    report, seconds = grade_beside_the_control(sandbox_image, attack)
    problem = report.problem("split_heads")
    assert problem.status is ProblemStatus.crashed
    assert "results the grader cannot read" in problem.message and reason in problem.message
    assert seconds < 60
