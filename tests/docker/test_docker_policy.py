"""The policy attacks in the Docker sandbox: each fails its check, the control keeps full marks."""

from __future__ import annotations

import pytest

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.models import CheckStatus
from grader.sandbox.backends.docker import DockerBackend
from tests import whole
from tests.conftest import ROOT
from tests.policy_attacks import HOSTILE, POLICY_ATTACKS

pytestmark = pytest.mark.docker


def test_policy_attacks_in_docker(sandbox_image: str) -> None:
    catalog = Catalog()
    names = sorted(POLICY_ATTACKS)
    batch = [HOSTILE / n for n in names] + [ROOT / "submissions" / "complete"]
    with Grader(catalog, list(catalog.problems.values()), DockerBackend(sandbox_image), 3) as g:
        reports = {r.submission: r for r in g.grade_many(batch, jobs=2)}
    assert reports["complete"].total == whole.full_marks(catalog)
    for name in names:
        problem, check, word = POLICY_ATTACKS[name]
        found = [c for c in reports[name].problem(problem).checks if c.check == check]
        assert found[0].status is CheckStatus.failed and word in found[0].message, (name, found)
