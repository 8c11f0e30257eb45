"""Grading end to end in the Docker sandbox: the same scores as the local backend, and every
hostile submission contained, with a clear status, while the rest of the batch is graded."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.models import CheckStatus, ProblemStatus
from grader.sandboxing.backends.base import LimitOverrides
from grader.sandboxing.backends.docker import DockerBackend
from grader.sandboxing.backends.local import LocalBackend
from grader.sandboxing.backends.warm import WarmBackend
from tests import whole
from tests.conftest import ROOT
from tests.docker.engine import sandbox_containers

pytestmark = pytest.mark.docker

PROBLEMS = ["split_heads", "causal_self_attention", "mha_by_loop"]
EXAMPLES = [ROOT / "submissions" / n for n in ("complete", "classic_mistakes", "partly_attempted")]
HOSTILE = {
    "infinite_loop": {ProblemStatus.timeout},
    "memory_bomb": {ProblemStatus.crashed, ProblemStatus.graded},
    "fork_bomb": {ProblemStatus.crashed, ProblemStatus.timeout, ProblemStatus.graded},
    "disk_fill": {ProblemStatus.graded, ProblemStatus.crashed, ProblemStatus.timeout},
    "print_flood": {ProblemStatus.graded, ProblemStatus.crashed},
    "kills_worker": {ProblemStatus.graded},  # the worker is PID 1: no child can signal it
    "os_exit": {ProblemStatus.crashed},
    "segfault": {ProblemStatus.crashed},
    "allclose_patched": {ProblemStatus.forbidden_api},  # torch.allclose changed: tampering
    "fake_report": {ProblemStatus.graded},
}
# Value checks a hostile module must not pass; causality is left out, since a module that maps
# each token on its own is honestly causal.
VALUE_CHECKS = {"allclose", "output_shape", "gradients", "dropout"}


def test_docker_scores_equal_local_scores(sandbox_image: str, tmp_path: Path) -> None:
    """The examples and the references gathered as one submission, on every problem: the
    complete ones score full marks in Docker, and every score equals the local backend's."""
    catalog = Catalog()
    problems = list(catalog.problems.values())
    batch = [*EXAMPLES, whole.references(catalog, tmp_path / "references")]
    with (
        Grader(catalog, problems, DockerBackend(sandbox_image), seed=5) as docker,
        Grader(catalog, problems, LocalBackend(), seed=5) as local,
    ):
        in_docker = docker.grade_many(batch, jobs=2)
        on_host = local.grade_many(batch, jobs=2)
    complete, references = in_docker[0], in_docker[-1]
    assert complete.total == references.total == whole.full_marks(catalog)
    assert complete.run.environment["backend"] == "docker"
    assert complete.run.environment["torch_version"].startswith("2.13.0")
    assert complete.run.environment["image_id"].startswith("sha256:")
    for ours, theirs in zip(in_docker, on_host, strict=True):
        assert [(p.problem, p.status, p.score) for p in ours.problems] == [
            (p.problem, p.status, p.score) for p in theirs.problems
        ]


def test_hostile_batch_is_contained(sandbox_image: str) -> None:
    catalog = Catalog()
    overrides = LimitOverrides(problem_seconds=10.0, memory_mb=1024)
    problems = catalog.select(["causal_self_attention"])
    paths = [ROOT / "tests" / "hostile" / name for name in HOSTILE]
    paths.append(ROOT / "submissions" / "complete")
    with Grader(catalog, problems, DockerBackend(sandbox_image), 0, overrides) as grader:
        reports = {r.submission: r for r in grader.grade_many(paths, jobs=2)}
    honest = reports["complete"].problem("causal_self_attention")
    assert honest.score == honest.max_score
    for name, statuses in HOSTILE.items():
        problem = reports[name].problem("causal_self_attention")
        assert problem.status in statuses, (name, problem.status, problem.message)
        assert not reports[name].grader_fault, (name, reports[name].message)
        passed = {c.check for c in problem.checks if c.status is CheckStatus.passed}
        judged = problem.status in (ProblemStatus.graded, ProblemStatus.forbidden_api)
        guarded = {"allclose"} if judged else VALUE_CHECKS
        assert not passed & guarded, (name, passed)
    assert sandbox_containers() == []


@pytest.mark.parametrize("warm", [False, True])
def test_a_problem_finds_nothing_the_problems_before_it_left(
    sandbox_image: str, warm: bool
) -> None:
    """`shares_between_problems` leaves each problem's inputs in /out, /tmp and its own folder
    and searches for the other's: in a container of its own and in a warm one, the out folder
    holds only the problem's own folder and nothing is found; both problems and the control
    keep full marks."""
    catalog = Catalog()
    backend = WarmBackend(sandbox_image) if warm else DockerBackend(sandbox_image)
    problems = catalog.select(["split_heads", "self_attention"])
    paths = [ROOT / "tests" / "hostile" / "shares_between_problems", *EXAMPLES[:1]]
    with Grader(catalog, problems, backend, 0) as grader:
        reports = {r.submission: r for r in grader.grade_many(paths, jobs=1)}
    assert reports["complete"].total == reports["complete"].max_total
    marks = {"split_heads": "INPUTS-OF-SPLIT-HEADS", "self_attention": "INPUTS-OF-SELF-ATTENTION"}
    for problem in reports["shares_between_problems"].problems:
        assert problem.score == problem.max_score, problem.message
        assert marks[problem.problem] in problem.stdout
        assert f"OUT HOLDS ['{problem.problem}']" in problem.stdout, problem.stdout
        assert "LEAKED" not in problem.stdout, problem.stdout
