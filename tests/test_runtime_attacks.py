"""The run-time layers on the local backend: each attack fails its check (a forbidden call
refused where it was made costs the values it would have produced; a loop over the heads shows
in what a call runs), and a correct control in the same batch keeps full marks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from grader.grade import Grader
from tests.conftest import ROOT
from tests.runtime_attacks import (
    HOSTILE,
    RED_TEAM,
    RUNTIME_ATTACKS,
    assert_caught,
    assert_full,
    assert_held,
    honest_submissions,
)


def test_runtime_attacks_fail_their_checks(
    make_grader: Callable[..., Grader], tmp_path: Path
) -> None:
    names = sorted(RUNTIME_ATTACKS) + sorted(RED_TEAM)
    honest = honest_submissions(tmp_path)
    paths = [HOSTILE / n for n in names] + honest + [ROOT / "submissions" / "complete"]
    reports = {r.submission: r for r in make_grader().grade_many(paths, jobs=2)}
    assert reports["complete"].total == reports["complete"].max_total
    for name in sorted(RUNTIME_ATTACKS):
        assert_caught(name, reports[name])
    for name in sorted(RED_TEAM):
        assert_held(name, reports[name])
    for path in honest:
        assert_full(reports[path.name])
