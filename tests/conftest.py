"""Shared fixtures: the shipped catalog and a local-backend grader factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.sandboxing.backends.base import LimitOverrides
from grader.sandboxing.backends.local import LocalBackend

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return Catalog()


@pytest.fixture(scope="session")
def make_grader(catalog: Catalog) -> Iterator[Callable[..., Grader]]:
    """Graders on the local backend, one per distinct set of problems and options."""
    made: dict[tuple[object, ...], Grader] = {}

    def make(
        problems: list[str] | None = None, seed: int = 0, problem_seconds: float | None = None
    ) -> Grader:
        key = (tuple(problems or []), seed, problem_seconds)
        if key not in made:
            limits = LimitOverrides(problem_seconds=problem_seconds)
            made[key] = Grader(catalog, catalog.select(problems), LocalBackend(), seed, limits)
        return made[key]

    yield make
    for grader in made.values():
        grader.close()
