"""The policy attacks and the run-time attacks in the Docker sandbox, warm and in a container of
its own: each fails its check, and a correct control in the same batch keeps full marks."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.models import CheckStatus
from grader.sandboxing.backends.base import Backend
from grader.sandboxing.backends.docker import DockerBackend
from grader.sandboxing.backends.warm import WarmBackend
from tests import whole
from tests.conftest import ROOT
from tests.policy_attacks import HOSTILE, POLICY_ATTACKS
from tests.runtime_attacks import (
    RED_TEAM,
    RUNTIME_ATTACKS,
    assert_caught,
    assert_full,
    assert_held,
    honest_submissions,
)

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("isolation", ["warm", "container"])
def test_policy_and_runtime_attacks_in_docker(
    sandbox_image: str, isolation: str, tmp_path: Path
) -> None:
    catalog = Catalog()
    names = sorted(POLICY_ATTACKS) + sorted(RUNTIME_ATTACKS) + sorted(RED_TEAM)
    honest = honest_submissions(tmp_path)
    batch = [HOSTILE / n for n in names] + honest + [ROOT / "submissions" / "complete"]
    backend: Backend = (
        WarmBackend(sandbox_image) if isolation == "warm" else DockerBackend(sandbox_image)
    )
    with Grader(catalog, list(catalog.problems.values()), backend, 3) as grader:
        reports = {r.submission: r for r in grader.grade_many(batch, jobs=2)}
    assert reports["complete"].total == whole.full_marks(catalog)
    assert reports["complete"].run.isolation == isolation
    for name in sorted(POLICY_ATTACKS):
        problem, check, word = POLICY_ATTACKS[name]
        found = [c for c in reports[name].problem(problem).checks if c.check == check]
        assert found[0].status is CheckStatus.failed and word in found[0].message, (name, found)
        assert not reports[name].grader_fault, name
    for name in sorted(RUNTIME_ATTACKS):
        assert_caught(name, reports[name])
    for name in sorted(RED_TEAM):
        assert_held(name, reports[name])
    for path in honest:
        assert_full(reports[path.name])
