"""The benchmark's phase breakdown (`grading_throughput.py --phases N`) times every phase of a
complete submission's problems' children on the local backend, and its judging."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import grading_throughput
import phases


@pytest.mark.timeout(300)
def test_every_phase_of_the_children_is_timed() -> None:
    rows = dict(grading_throughput.phase_breakdown(1, seed=0))
    timed = [f"child: {p}" for p in phases.PHASES]
    assert list(rows) == [*timed, "child: the rest", "host: judging", "host: the rest"]
    assert all(rows[name] > 0 for name in timed), rows
    # 11 children, each forked, armed, importing and probing: the probes take the most
    assert rows["child: probes"] == max(rows[name] for name in timed), rows
    assert rows["host: judging"] > 0
