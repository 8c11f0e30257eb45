"""The Gradescope zip's scripts and wheels, and finding the problem files in an upload."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from grader.platforms.gradescope.autograder import RUN, SETUP, build_autograder, requirements
from grader.sandboxing.locate import locate

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
