"""The Gradescope zip's scripts and wheels, and finding the problem files in an upload."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli.main import cli
from grader.platforms.gradescope.autograder import RUN, SETUP, build_autograder, requirements
from grader.reports.models import CheckStatus, read_report
from grader.reports.text import num
from grader.sandboxing.locate import locate
from tests.conftest import ROOT

ENTRIES = {"split_heads.py", "mha_by_loop.py"}


@pytest.mark.parametrize("script", [SETUP, RUN])
def test_scripts_are_valid_bash_without_pkill(script: str) -> None:
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    assert "pkill" not in script


def test_requirements_pin_torch_and_cover_python_3_10() -> None:
    wanted = requirements()
    assert wanted[0] == "torch==2.13.0"
    assert "tomli>=1.1" in wanted  # markers dropped: a wheelhouse may serve Python 3.10
    assert any(r.startswith("setuptools") for r in wanted)  # the editable install's backend


def test_zip_carries_a_wheelhouse(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "demo-1.0-py3-none-any.whl").write_bytes(b"not really a wheel")
    out = build_autograder(tmp_path / "autograder.zip", wheelhouse=wheels)
    with zipfile.ZipFile(out) as archive:
        assert archive.read("wheelhouse/demo-1.0-py3-none-any.whl") == b"not really a wheel"
    assert build_autograder(tmp_path / "again.zip", wheelhouse=wheels).read_bytes() == (
        out.read_bytes()
    )


def test_files_at_the_top(tmp_path: Path) -> None:
    """The top is graded, even where a folder of it holds problem files too."""
    (tmp_path / "split_heads.py").write_text("")
    (tmp_path / "hw").mkdir()
    (tmp_path / "hw" / "mha_by_loop.py").write_text("")
    assert locate(tmp_path, ENTRIES).folder == tmp_path
    assert locate(tmp_path, ENTRIES).note == ""


def test_files_in_one_folder(tmp_path: Path) -> None:
    (tmp_path / "hw" / "__pycache__").mkdir(parents=True)
    (tmp_path / "hw" / "mha_by_loop.py").write_text("")
    (tmp_path / "__MACOSX" / "hw").mkdir(parents=True)
    (tmp_path / "__MACOSX" / "mha_by_loop.py").write_text("")
    located = locate(tmp_path, ENTRIES)
    assert located.folder == tmp_path / "hw"
    assert "folder hw/" in located.note


def test_files_in_several_folders(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "split_heads.py").write_text("")
    located = locate(tmp_path, ENTRIES)
    assert located.folder == tmp_path
    assert "several folders (a/, b/)" in located.note


def test_no_problem_file_says_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "deep" / "deeper").mkdir(parents=True)
    (tmp_path / "deep" / "deeper" / "split_heads.py").write_text("")
    (tmp_path / "notes.txt").write_text("")
    located = locate(tmp_path, ENTRIES)
    assert located.folder == tmp_path
    assert "mha_by_loop.py, split_heads.py" in located.note
    assert "it holds: deep/, notes.txt" in located.note


@pytest.mark.timeout(300)
def test_run_prints_a_short_summary_for_instructors(tmp_path: Path) -> None:
    """What Gradescope shows instructors as the autograder's output: the score, each problem's
    status and what failed, the notes, where the full report and results.json are; not the
    report's JSON (5 to 30 KB a submission)."""
    upload = tmp_path / "submission"
    shutil.copytree(ROOT / "submissions" / "classic_mistakes", upload)
    shutil.copy(ROOT / "submissions" / "complete" / "self_attention.py", upload / "SelfAttn.py")
    results = tmp_path / "results" / "results.json"
    result = CliRunner().invoke(
        cli,
        ["gradescope", "run", str(upload), "--results", str(results)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    full = read_report(results.with_name("report.json"))
    lines = result.stdout.splitlines()
    assert lines[0] == f"score {num(full.total)}/180 (seed {full.run.seed})"
    assert len(result.stdout.encode()) < 4000 and not result.stdout.startswith("{")
    mistakes = full.problem("split_heads")
    assert ["split_heads", f"{num(mistakes.score)}/13"] in [line.split() for line in lines]
    failed = [c for c in mistakes.checks if c.status is CheckStatus.failed]
    assert failed and all(f"      ✘ {c.name}: " in result.stdout for c in failed)
    assert any(line.startswith("not attempted: self_attention, ") for line in lines)
    assert (
        "  self_attention: no self_attention.py in the submission: found SelfAttn.py: rename it "
        "to self_attention.py"
    ) in lines
    assert lines[-2:] == [
        f"full report (JSON): {results.with_name('report.json')}",
        f"results.json: {results}",
    ]
    assert json.loads(results.read_text())["score"] == full.total
