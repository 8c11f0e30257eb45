"""The probe economy (`grader.economy`): `validate` weighs every probe on the mutants it grades,
says which find nothing the others do not (failing with `--strict-probes`, which the test
command passes over the whole catalog), and `--probes` prints what each one finds."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli.main import cli
from grader.courses.catalog import Catalog
from grader.specs.paths import builtin_problems, builtin_references
from grader.verdict.plan import Plan

EXTRA_CONFIG = """
[[configs]]
id = "c12"
init = { embedding_dim = 12 }
args = [{ shape = [2, 4, 12] }]
"""

RIGHT = "        return att @ v  # (B, T, C)"
WRONG_WHERE_T_OVER_8 = "        return (att @ v) * (1.01 if x.shape[1] > 8 else 1.0)"
"""The reference's last line, and a mistake only the config with T = 9 shows."""


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """self_attention alone, with one config more, saying nothing of what it covers, probed by
    its float64 check and its check of every config, and a mutant only its T = 9 config
    shows."""
    course = tmp_path / "course"
    problem = course / "problems" / "self_attention"
    shutil.copytree(builtin_problems() / "self_attention", problem)
    (course / "course.toml").write_text('name = "economy"\n')
    (course / "reference_solutions").mkdir()
    shutil.copyfile(
        builtin_references() / "self_attention.py",
        course / "reference_solutions" / "self_attention.py",
    )
    spec = problem / "spec.toml"
    text = spec.read_text().replace("\n[[checks]]", EXTRA_CONFIG + "\n[[checks]]", 1)
    float64 = 'params = { dtype = "float64", configs = ["c8_T9"] }'
    assert float64 in text
    spec.write_text(text.replace(float64, float64.replace('"c8_T9"', '"c8_T9", "c12"')))
    reference = (builtin_references() / "self_attention.py").read_text()
    assert RIGHT in reference
    mutant = reference.replace(RIGHT, WRONG_WHERE_T_OVER_8)
    header = "# expect-fail: matches the reference (float32)\n"
    (problem / "mutants" / "only_when_t_over_8.py").write_text(header + mutant)
    return course


@pytest.mark.timeout(600)
def test_validate_weighs_every_probe_and_names_the_one_that_finds_nothing(course: Path) -> None:
    strict = ["validate", "--course", str(course), "--jobs", "2", "--strict-probes"]
    result = CliRunner().invoke(cli, strict)
    assert result.exit_code == 1, result.output  # every entry passed: the probes failed it
    assert "16 passed, 0 failed" in result.output, result.output
    asked = re.findall(r"^self_attention p\d+ \((.*)\) finds nothing", result.output, re.M)
    # c12 is probed by the check of every config too: the two probes it adds find nothing
    assert asked == ["output shape (B, T, C) on c12", "matches the reference (float64) on c12"]

    table = CliRunner().invoke(
        cli, ["validate", "--course", str(course), "--jobs", "2", "--probes"]
    )
    assert table.exit_code == 0, table.output  # without --strict-probes, said and not failed
    rows = {
        m.group(1): m.group(3)
        for m in re.finditer(r"^\| (p\d+) \| (.*) \| [\d.]+ \| (.*) \|$", table.output, re.M)
    }
    catalog = Catalog(course / "problems")
    problem = catalog.problems["self_attention"]
    plan = Plan(problem.spec, 0, catalog.reference_source())
    for check in problem.checks():
        check.prepare(plan)
    assert rows.keys() == plan.probes.keys()
    findings = list(rows.values())
    assert findings.count("nothing the others do not find: it could go") == 2
    assert "needed by mutant only_when_t_over_8" in findings, findings
    names = "parameters are named W_q, W_k and W_v, as the contract says"
    assert f"kept: asked for by {names!r} whatever its configs" in findings, findings
