"""Forged policy facts gain nothing: each attack fails its check, a correct control in the same
batch keeps full marks."""

from __future__ import annotations

from collections.abc import Callable

from grader.grade import Grader
from grader.reports.models import CheckStatus
from tests.conftest import ROOT
from tests.policy_attacks import HOSTILE, POLICY_ATTACKS


def test_policy_attacks_fail_their_checks(make_grader: Callable[..., Grader]) -> None:
    names = sorted(POLICY_ATTACKS)
    paths = [HOSTILE / n for n in names] + [ROOT / "submissions" / "complete"]
    reports = {r.submission: r for r in make_grader().grade_many(paths, jobs=2)}
    assert reports["complete"].total == reports["complete"].max_total
    for name in names:
        problem, check, word = POLICY_ATTACKS[name]
        result = reports[name].problem(problem)
        found = [c for c in result.checks if c.check == check]
        assert found and found[0].status is CheckStatus.failed, (name, found)
        assert word in found[0].message, (name, found[0].message)
        assert not reports[name].grader_fault
