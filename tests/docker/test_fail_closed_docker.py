"""Candidate bytes and names against the real engine, warm and in a container of its own: a
1100-deep folder, a 252-byte folder name, a name that is not UTF-8, a zip member named with
303 bytes, a folder named like the grader's own file, 25 MB of small files, a float8 output,
forged result records and a leftover named with bytes that are not UTF-8 (in the warm worker's
end frame) each get their submission's verdict; the correct control beside
them keeps full marks, no report is a grader error, and every file is written in `--out`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli.main import cli
from grader.names import report_file
from grader.reports.models import ProblemStatus, read_report
from tests.conftest import ROOT
from tests.test_fail_closed import SPLIT_HEADS, hostile_names_and_trees
from tests.test_staging import remove_chain

pytestmark = pytest.mark.docker

HOSTILE = ROOT / "tests" / "hostile"
OPTIONS = ["--problem", "split_heads", "--problem", "causal_self_attention", "--jobs", "2"]
FORMATS = ["--format", "html,markdown,gradescope,junit", "--seed", "3"]


def hostile_class(batch: Path) -> tuple[list[str], list[Path]]:
    """`hostile_names_and_trees` and more: a folder named like the grader's own file, 25 MB of
    small files, a float8 output, forged result records and a leftover the worker cannot clear
    under a name that is not UTF-8."""
    names, chain = hostile_names_and_trees(batch)
    (batch / "grader-shard").mkdir()
    shutil.copyfile(SPLIT_HEADS, batch / "grader-shard" / "split_heads.py")
    crowded = batch / "crowded"
    crowded.mkdir()
    for i in range(250):
        (crowded / f"a{i:03}.py").write_text("#" * 100_000 + "\n")
    shutil.copyfile(SPLIT_HEADS, crowded / "split_heads.py")
    for attack in ATTACKS:
        shutil.copytree(HOSTILE / attack, batch / attack)
    return [*names, "grader-shard", "crowded", *ATTACKS], chain


ATTACKS = ("returns_float8", "forges_results", "shields_with_leftovers")


@pytest.mark.parametrize("isolation", ["warm", "container"])
def test_hostile_bytes_and_names_keep_the_batch(
    sandbox_image: str, tmp_path: Path, isolation: str
) -> None:
    batch, out = tmp_path / "class", tmp_path / "reports"
    names, chain = hostile_class(batch)
    try:
        result = CliRunner().invoke(
            cli,
            ["grade", str(batch), "--out", str(out), "--isolation", isolation, *OPTIONS, *FORMATS],
            catch_exceptions=False,
        )
    finally:
        remove_chain(chain)
    assert result.exit_code == 0, result.output
    reports = {name: read_report(out / report_file(name)) for name in names}
    for name, report in reports.items():
        assert not report.grader_fault, (name, report.message)
        assert report.run.isolation == isolation
    control = reports["complete"]
    assert control.total == control.max_total, control
    named_like_ours = reports["grader-shard"].problem("split_heads")
    assert named_like_ours.score == named_like_ours.max_score
    float8 = reports["returns_float8"].problem("causal_self_attention")
    shape = next(c for c in float8.checks if c.check == "output_shape")
    assert "float8_e4m3fn" in shape.message and float8.score < float8.max_score
    shielded = reports["shields_with_leftovers"].problem("causal_self_attention")
    assert shielded.status is ProblemStatus.forbidden_api, (shielded.status, shielded.message)
    assert {p.parent for p in tmp_path.rglob("*.json")} <= {out, out / "gradescope"}
