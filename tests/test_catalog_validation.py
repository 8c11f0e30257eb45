"""Every problem proves its own checks: reference full marks, starter not, mutants caught."""

from __future__ import annotations

import pytest

from grader.backends.local import LocalBackend
from grader.catalog import Catalog
from grader.validate import mutants_of, validate_problems

CATALOG = Catalog()


@pytest.mark.parametrize("problem", list(CATALOG.problems))
def test_problem_validates(problem: str) -> None:
    outcomes = validate_problems(CATALOG, CATALOG.select([problem]), LocalBackend(), 0, 2)
    misses = [o for o in outcomes if not o.ok]
    assert not misses, misses
    assert len(mutants_of(CATALOG.problems[problem])) >= 4


def test_core_problems_have_six_diagnosed_mistakes() -> None:
    for problem in ("split_heads", "causal_self_attention", "mha_by_loop"):
        mutants = mutants_of(CATALOG.problems[problem])
        assert len(mutants) >= 6
        assert len({d for m in mutants for d in m.diagnoses}) >= 3, problem
