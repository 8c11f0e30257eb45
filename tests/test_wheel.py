"""The package as a user installs it: a wheel in a fresh virtualenv, run outside any checkout."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.compat import tomllib
from tests.conftest import ROOT, Installed, clean_env, sh


@pytest.fixture(scope="module")
def graded(installed: Installed) -> Path:
    """The example submissions graded by the installed wheel: its output folder."""
    bin_dir, work, env = installed
    sh([str(bin_dir / "grader"), "grade", str(ROOT / "submissions"), "--backend", "local",
        "--jobs", "2", "--seed", "3", "--out", "out"], work, env)  # fmt: skip
    return work / "out"


def test_the_readme_names_the_wheel_that_is_built(wheel: Path) -> None:
    """The README's install command names the file `pip wheel` writes."""
    assert f"pip install {wheel.name}\n" in (ROOT / "README.md").read_text()


def test_the_wheel_grades_outside_the_checkout(installed: Installed, graded: Path) -> None:
    bin_dir, work, env = installed
    where = sh([str(bin_dir / "python"), "-c", "import grader; print(grader.__file__)"], work, env)
    assert Path(where.strip()).is_relative_to(bin_dir.parent), where  # not the checkout's copy
    grader = str(bin_dir / "grader")
    listed = sh([grader, "problems"], work, env)
    assert len(listed.strip().splitlines()) == 11 and "split_heads" in listed
    complete = ROOT / "submissions" / "complete"
    checked = sh([grader, "check", str(complete), "--problem", "split_heads"], work, env)
    assert "split_heads" in checked
    full = json.loads((graded / "complete.json").read_text())
    assert full["total"] == full["max_total"] == 180
    mistakes = json.loads((graded / "classic_mistakes.json").read_text())
    assert 0 < mistakes["total"] < mistakes["max_total"]
    validated = sh([grader, "validate", "split_heads", "--jobs", "2"], work, env)
    assert " 0 failed" in validated
    sh([grader, "release", "--out", "kit", "--seed", "1"], work, env)
    assert (work / "kit" / "problems" / "split_heads" / "starter.py").is_file()
    assert not list((work / "kit").rglob("*reference*.py"))
    sh([grader, "gradescope", "build", "--out", "autograder.zip"], work, env)
    with zipfile.ZipFile(work / "autograder.zip") as archive:
        packed = set(archive.namelist())
    assert {"grader/course.toml", "grader/reference_solutions/split_heads.py"} <= packed
    assert not any("_course" in name for name in packed)
    assert "--wheelhouse" in sh([grader, "sandbox", "build", "--help"], work, env)
    context = work / "context"
    context.mkdir()
    assemble = (
        "import sys; from pathlib import Path; from grader.sandboxing.paths import DOCKERFILE, "
        "SANDBOX_DIR; from grader.sandboxing.defaults import TORCH_VERSION; "
        "from grader.sandboxing.image import assemble_context; "
        "assemble_context(Path(sys.argv[1]), SANDBOX_DIR, DOCKERFILE, None, TORCH_VERSION)"
    )
    sh([str(bin_dir / "python"), "-c", assemble, str(context)], work, env)
    assert {p.name for p in context.iterdir()} >= {"Dockerfile", "sandbox", "requirements.txt"}
    shipped = {p.name: p.read_bytes() for p in (context / "sandbox").iterdir()}
    assert shipped == {p.name: p.read_bytes() for p in (ROOT / "sandbox").glob("*.py")}


def python_3_10() -> str | None:
    """A Python 3.10 interpreter on this machine (Ubuntu 22.04's, Gradescope's default), if any."""
    pyenv = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10.*/bin/python3.10")))
    for candidate in [shutil.which("python3.10"), *pyenv]:
        if candidate is not None:
            probe = subprocess.run([candidate, "--version"], capture_output=True, text=True)
            if probe.returncode == 0:
                return candidate
    return None


def test_the_wheel_runs_on_python_3_10_and_says_when_torch_is_missing(
    tmp_path: Path, wheel: Path, graded: Path
) -> None:
    """Python 3.10 in a fresh virtualenv: the wheel and its dependencies from the index, but
    torch (this machine has no CPU build of it for 3.10). What needs no tensors runs, reports
    included; what needs them says what to install."""
    python = python_3_10()
    if python is None:
        pytest.skip("no Python 3.10 interpreter here")
    env = clean_env()
    sh([python, "-m", "venv", str(tmp_path / "venv")], tmp_path, env)
    bin_dir = tmp_path / "venv" / "bin"
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    wanted = [d for d in declared if not d.startswith("torch")]
    sh([str(bin_dir / "pip"), "install", "-q", *wanted], tmp_path, env)
    sh([str(bin_dir / "pip"), "install", "-q", "--no-deps", str(wheel)], tmp_path, env)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    version = sh([str(bin_dir / "python"), "--version"], tmp_path, env)
    assert version.startswith("Python 3.10"), version
    grader = str(bin_dir / "grader")
    assert len(json.loads(sh([grader, "problems", "--json"], tmp_path, env))) == 11
    assert "split_heads" in sh([grader, "show", "split_heads"], tmp_path, env)
    sh([grader, "init", "split_heads", "mine"], tmp_path, env)
    assert (tmp_path / "mine" / "split_heads.py").is_file()
    assert json.loads(sh([grader, "schema"], tmp_path, env))["title"]
    sh([grader, "report", str(graded), "--format", "html,csv,junit,markdown",
        "--out", "again"], tmp_path, env)  # fmt: skip
    again = tmp_path / "again"
    assert "<svg" in (again / "report.html").read_text()
    assert (again / "summary.csv").read_text() == (graded / "summary.csv").read_text()
    refused = subprocess.run(
        [grader, "check", "mine"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert refused.returncode == 2, refused.stderr
    assert "PyTorch is not installed" in refused.stderr
    assert "Traceback" not in refused.stderr


OWN_TYPE_VARIABLE = """\
from typing_extensions import TypeVar

Scalar = TypeVar("Scalar", default=float)  # typing_extensions reads its caller's frame here

"""


@pytest.mark.parametrize("layout", ["target", "user"])
def test_the_wheel_grades_where_pip_puts_it_outside_site_packages(
    tmp_path: Path, wheel: Path, layout: str
) -> None:
    """`pip install --target T` with PYTHONPATH=T, and `pip install --user`: the code that was
    there before the candidate's is the libraries', wherever it is installed. typing_extensions
    beside the wheel read a frame for the candidate's TypeVar, and was refused as their own."""
    env = clean_env()
    if layout == "target":
        target = tmp_path / "T"
        sh([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
            str(wheel), "typing_extensions"], tmp_path, env)  # fmt: skip
        env["PYTHONPATH"] = str(target)
        found = target
    else:
        env["PYTHONUSERBASE"] = str(tmp_path / "user")
        sh([sys.executable, "-m", "pip", "install", "-q", "--user", "--no-deps", str(wheel)],
           tmp_path, env)  # fmt: skip
        found = tmp_path / "user"
    batch = tmp_path / "batch"
    shutil.copytree(ROOT / "submissions" / "complete", batch / "complete")
    shutil.copytree(ROOT / "submissions" / "complete", batch / "typed")
    typed = batch / "typed" / "split_heads.py"
    typed.write_text(OWN_TYPE_VARIABLE + typed.read_text())
    grader = [sys.executable, "-c", "from grader.cli.main import main; main()"]
    where = sh([sys.executable, "-c", "import grader; print(grader.__file__)"], tmp_path, env)
    assert Path(where.strip()).is_relative_to(found), where
    sh([*grader, "grade", str(batch), "--backend", "local", "--out", "out"], tmp_path, env)
    for name in ("complete", "typed"):
        report = json.loads((tmp_path / "out" / f"{name}.json").read_text())
        assert report["total"] == report["max_total"] == 180, (name, report["problems"])
