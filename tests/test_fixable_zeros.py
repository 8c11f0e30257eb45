"""A zero its candidate could fix (files misnamed) looks like one wherever an instructor looks:
the gradebook, the terminal table, summary.md and the class report, never like an empty
folder."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from click.testing import CliRunner

from grader.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent


def test_misnamed_files_are_a_zero_to_look_at_in_every_instructor_output(tmp_path: Path) -> None:
    misnamed, empty = tmp_path / "class" / "misnamed", tmp_path / "class" / "empty"
    misnamed.mkdir(parents=True)
    empty.mkdir()
    shutil.copy(ROOT / "submissions" / "complete" / "split_heads.py", misnamed / "SplitHeads.py")
    out = tmp_path / "out"
    args = ["grade", str(tmp_path / "class"), "--backend", "local", "--out", str(out)]
    result = CliRunner(env={"COLUMNS": "250"}).invoke(
        cli, [*args, "--format", "markdown,html"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    fix = "no split_heads.py in the submission: found SplitHeads.py: rename it to split_heads.py"

    rows = {row["submission"]: row for row in csv.DictReader((out / "summary.csv").open())}
    assert rows["misnamed"]["status"] == "fixable" and rows["misnamed"]["split_heads"] == "0"
    assert rows["misnamed"]["notes"] == f"split_heads: {fix}"
    assert rows["empty"]["status"] == "not_attempted" and rows["empty"]["notes"] == ""

    table = result.output[result.output.index("Scores") :]
    assert " empty         -      0 \n misnamed     -?      0 \n\n 4 split_heads\n" in table
    assert f"\n misnamed  problem 4: not attempted: {fix} \n" in table

    summary = (out / "summary.md").read_text().replace("\\", "")
    dashes = "| - " * 7
    assert f"| misnamed | - | - | - | -? {dashes}| 0/180 | fixable |" in summary
    assert f"| misnamed | split_heads: {fix} |" in summary
    assert f"| empty | - | - | - | - {dashes}| 0/180 | not attempted |" in summary

    report = (out / "report.html").read_text()
    assert f'<td class="n fix" title="not attempted: {fix}">-?</td>' in report
    assert f'<small class="fix">split_heads: {fix}</small>' in report
    assert report.count("a zero to look at</span>") == 2  # the table's row and the details
