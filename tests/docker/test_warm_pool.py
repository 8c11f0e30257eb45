"""Warm workers against the real engine: when a serving container is replaced, and that the
submission after a replacement is graded as if nothing had happened.

A container serves K submissions, then a fresh one takes over; one that timed out, ran out of
memory or died while idle is never used again. Containers started ahead serve the first
submissions, and are removed when none came for them. Each test grades a correct submission after
the event, in the same pool, and requires full marks from a container other than the
retired one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.models import ProblemStatus, SubmissionReport
from grader.sandboxing.backends.base import LimitOverrides, batch_limits
from grader.sandboxing.backends.warm import WarmBackend
from grader.sandboxing.engine import client
from tests.conftest import ROOT
from tests.docker.engine import sandbox_containers

pytestmark = pytest.mark.docker

PROBLEM = "causal_self_attention"
CORRECT = ROOT / "submissions" / "complete"
HOSTILE = ROOT / "tests" / "hostile"


def container(report: SubmissionReport) -> str:
    return report.run.environment["container"]


def full_marks(report: SubmissionReport) -> bool:
    return report.total == report.max_total > 0


@pytest.fixture
def catalog() -> Catalog:
    return Catalog()


def pool(catalog: Catalog, image: str, serve_count: int = 50, wall: float | None = None) -> Grader:
    problems = [catalog.problems[PROBLEM]]
    overrides = LimitOverrides(wall_seconds=wall)
    return Grader(catalog, problems, WarmBackend(image, serve_count), 3, overrides)


def test_a_container_serves_k_submissions_then_a_fresh_one_takes_over(
    sandbox_image: str, catalog: Catalog
) -> None:
    with pool(catalog, sandbox_image, serve_count=2) as grader:
        reports = [grader.grade(CORRECT) for _ in range(3)]
    names = [container(r) for r in reports]
    assert all(full_marks(r) for r in reports)
    assert names[0] == names[1] != names[2]


def test_a_timed_out_container_is_replaced(sandbox_image: str, catalog: Catalog) -> None:
    with pool(catalog, sandbox_image, wall=4) as grader:
        stuck = grader.grade(HOSTILE / "infinite_loop")
        after = grader.grade(CORRECT)
    assert stuck.problems[0].status is ProblemStatus.timeout
    assert full_marks(after)
    assert container(after) != container(stuck)


def test_a_container_that_ran_out_of_memory_is_replaced(
    sandbox_image: str, catalog: Catalog
) -> None:
    with pool(catalog, sandbox_image) as grader:
        bomb = grader.grade(HOSTILE / "memory_bomb")
        after = grader.grade(CORRECT)
    assert bomb.message == "the worker ran out of memory"
    assert full_marks(after)
    assert container(after) != container(bomb)


def test_a_container_that_died_while_idle_is_replaced_without_losing_the_next_submission(
    sandbox_image: str, catalog: Catalog
) -> None:
    with pool(catalog, sandbox_image) as grader:
        first = grader.grade(CORRECT)
        client().containers.get(container(first)).kill()
        after = grader.grade(CORRECT)
    assert full_marks(first)
    assert full_marks(after), after.problems[0].message
    assert container(after) != container(first)


def test_containers_started_ahead_serve_the_first_submissions(
    sandbox_image: str, catalog: Catalog, tmp_path: Path
) -> None:
    copies = [shutil.copytree(CORRECT, tmp_path / str(index)) for index in range(3)]
    problems = [catalog.problems[PROBLEM]]
    ready = batch_limits([p.spec.limits for p in problems])
    backend = WarmBackend(sandbox_image, ready=ready, workers=2)
    with Grader(catalog, problems, backend, 3) as grader:
        reports = grader.grade_many(copies, jobs=2)
        started = {client().containers.get(c).name for c in sandbox_containers()}
    assert all(full_marks(r) for r in reports)
    assert {container(r) for r in reports} == started  # the two started ahead, and no other
    assert len(started) == 2


def test_containers_started_ahead_that_no_submission_took_are_removed(
    sandbox_image: str, catalog: Catalog
) -> None:
    ready = batch_limits([catalog.problems[PROBLEM].spec.limits])
    WarmBackend(sandbox_image, ready=ready, workers=2).close()
    assert sandbox_containers() == []
