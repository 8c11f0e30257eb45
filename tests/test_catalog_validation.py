"""The catalog proves its own checks; `grader validate` over every problem runs in the test
command (scripts/test.sh). Here: the CLI on one problem, and the size of the mutant banks."""

from __future__ import annotations

from click.testing import CliRunner

from grader.cli.main import cli
from grader.courses.catalog import Catalog
from grader.validate import mutants_of

CATALOG = Catalog()


def test_validate_command_passes_on_a_problem() -> None:
    result = CliRunner().invoke(cli, ["validate", "split_heads", "--jobs", "2"])
    assert result.exit_code == 0, result.output
    assert "0 failed" in result.output


def test_mutant_banks() -> None:
    counts = {p: len(mutants_of(problem)) for p, problem in CATALOG.problems.items()}
    assert all(n >= 4 for n in counts.values()), counts
    for problem in ("split_heads", "causal_self_attention", "mha_by_loop"):
        mutants = mutants_of(CATALOG.problems[problem])
        assert len(mutants) >= 6
        assert len({d for m in mutants for d in m.diagnoses}) >= 3, problem
