"""The catalog proves its own checks; `grader validate` over every problem runs in the test
command (scripts/test.sh). Here: the CLI on one problem, and the size of the mutant banks."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli.main import cli
from grader.courses.catalog import Catalog
from grader.specs.problem import SpecError
from grader.validate import judge_mutant, mutants_of, read_mutant
from grader.verdict.checks import CHECKS
from grader.verdict.diagnose import MISTAKES
from tests.conftest import ROOT
from tests.reports import sample_reports

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


def test_a_mutant_declares_only_known_mistakes(tmp_path: Path) -> None:
    mutant = tmp_path / "typo.py"
    mutant.write_text(
        "# expect-fail: matches the reference (float32)\n# expect-diagnosis: no_scal\n"
    )
    with pytest.raises(SpecError, match=r"typo\.py: expect-diagnosis: no mistake named 'no_scal'"):
        read_mutant(mutant)


def test_a_declared_diagnosis_must_be_one_a_candidate_sees(tmp_path: Path) -> None:
    """The sample report diagnoses view_no_transpose on a visible check, interleaved_heads on a
    hidden one: the second is declared as hidden or it fails validation."""
    report = sample_reports()[1]
    problem = CATALOG.problems["split_heads"]
    checks = {c.name: c for c in report.problem("split_heads").checks}
    failed = next(name for name, c in checks.items() if c.status == "failed")
    lines = [f"# expect-fail: {failed}"]
    for header, fault in (
        ("expect-diagnosis: view_no_transpose", None),
        ("expect-hidden-diagnosis: interleaved_heads", None),
        ("expect-diagnosis: interleaved_heads", "made by hidden checks only"),
    ):
        mutant = tmp_path / "m.py"
        mutant.write_text("\n".join([*lines, f"# {header}"]) + "\n")
        misses = judge_mutant(problem, read_mutant(mutant), report)
        if fault is None:
            assert misses == [], (header, misses)
        else:
            assert len(misses) == 1 and fault in misses[0], (header, misses)


def test_the_authoring_guide_is_the_one_the_grader_prints() -> None:
    """docs/checks.md is `grader checks`: regenerate it with `grader checks > docs/checks.md`."""
    printed = CliRunner().invoke(cli, ["checks"]).output
    assert (ROOT / "docs" / "checks.md").read_text() == printed
    for check_id in CHECKS:
        assert f"### `{check_id}`" in printed
    assert all(f"`{mistake}`" in printed for mistake in MISTAKES)
