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


def test_the_readme_names_the_wheels_that_are_built(wheel: Path, course_wheel: Path) -> None:
    """The README's install commands name the files `pip wheel` writes: both for instructors,
    the grader's alone for candidates."""
    readme = (ROOT / "README.md").read_text()
    assert f"pip install {wheel.name} {course_wheel.name}\n" in readme
    assert f"`pip install {wheel.name}`" in readme


def course_secrets() -> list[str]:
    """What only the built-in course holds: a line of each reference solution and the name of
    each hidden check, none of them also in the grader's code."""
    code = "".join(p.read_text() for p in [*(ROOT / "grader").rglob("*.py"), ROOT / "README.md"])
    secrets = []
    for reference in sorted((ROOT / "reference_solutions").glob("*.py")):
        lines = {line.strip() for line in reference.read_text().splitlines()}
        secrets.append(max((line for line in lines if line not in code), key=len))
    for spec in sorted((ROOT / "problems").glob("*/spec.toml")):
        checks = tomllib.loads(spec.read_text())["checks"]
        secrets += [c["name"] for c in checks if c.get("visibility") == "hidden"]
    return [secret for secret in secrets if secret not in code]


def found_in(venv: Path, secrets: list[str]) -> set[str]:
    """The secrets some file of the virtualenv holds."""
    held = [p.read_bytes() for p in venv.rglob("*") if p.is_file() and not p.is_symlink()]
    return {s for s in secrets if any(s.encode() in data for data in held)}


def test_a_candidate_s_install_holds_no_answer_and_checks_with_the_kit(
    candidate: Installed, installed: Installed
) -> None:
    """The grader's wheel alone, as candidates install it: no reference line and no hidden
    check's name anywhere in the virtualenv (the instructor's, with the course wheel, holds
    them all); `grader check --course kit` works with the kit alone, and what needs the course
    says how to get one."""
    bin_dir, work, env = candidate
    secrets = course_secrets()
    assert len(secrets) > 2 * len(list((ROOT / "reference_solutions").glob("*.py"))), secrets
    assert found_in(installed[0].parent, secrets) == set(secrets)
    assert found_in(bin_dir.parent, secrets) == set()
    kit = work / "kit"
    sh([sys.executable, "-c", "from grader.cli.main import main; main()", "release",
        "--out", str(kit), "--seed", "1"], ROOT, clean_env())  # fmt: skip
    grader = str(bin_dir / "grader")
    mine = work / "mine"
    shutil.copytree(ROOT / "submissions" / "complete", mine)
    checked = sh([grader, "check", str(mine), "--course", str(kit)], work, env)
    assert "split_heads" in checked and "hidden" in checked
    broken = work / "broken"
    shutil.copytree(mine, broken)
    (broken / "split_heads.py").write_text("def split_heads(x, h):\n    return x\n")
    failed = sh([grader, "check", str(broken), "--course", str(kit), "--problem", "split_heads"],
                work, env, ok=(1,))  # fmt: skip
    assert "split_heads" in failed
    for argv in (["check", str(mine)], ["grade", str(mine), "--backend", "local"], ["problems"]):
        refused = subprocess.run([grader, *argv], cwd=work, env=env, capture_output=True, text=True)
        assert refused.returncode == 2, (argv, refused.stdout, refused.stderr)
        said = " ".join(refused.stderr.split())
        assert "--course" in said and "attention-grader-course" in said, said
        assert "Traceback" not in refused.stderr


def test_the_wheel_grades_outside_the_checkout(installed: Installed, graded: Path) -> None:
    bin_dir, work, env = installed
    where = sh([str(bin_dir / "python"), "-c", "import grader; print(grader.__file__)"], work, env)
    assert Path(where.strip()).is_relative_to(bin_dir.parent), where  # not the checkout's copy
    grader = str(bin_dir / "grader")
    listed = json.loads(sh([grader, "problems", "--json"], work, env))
    assert len(listed) == 11 and "split_heads" in [p["id"] for p in listed]
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


def test_an_instructor_with_the_grader_alone_grades_a_course_of_their_own(
    candidate: Installed,
) -> None:
    """The grader's wheel without the built-in course: a course of one's own validates, is
    released, graded and packed for Gradescope; a course that sets a built-in problem says how
    to get the built-in course."""
    bin_dir, work, env = candidate
    grader = str(bin_dir / "grader")
    own = work / "own"
    shutil.copytree(ROOT / "tests" / "course_example", own)
    sets_builtin = own / "course.toml"
    sets_builtin.rename(own / "with_builtin.toml")
    sets_builtin.write_text('name = "Doubling"\n')
    assert " 0 failed" in sh([grader, "validate", "--course", str(own), "--jobs", "2"], work, env)
    sh([grader, "release", "--course", str(own), "--out", "own_kit", "--seed", "1"], work, env)
    assert (work / "own_kit" / "problems" / "doubling" / "starter.py").is_file()
    submission = work / "class" / "ada"
    submission.mkdir(parents=True)
    shutil.copyfile(own / "reference_solutions" / "doubling.py", submission / "doubling.py")
    sh([grader, "grade", str(work / "class"), "--course", str(own), "--backend", "local",
        "--out", "own_out"], work, env)  # fmt: skip
    report = json.loads((work / "own_out" / "ada.json").read_text())
    assert report["total"] == report["max_total"] > 0
    sh([grader, "gradescope", "build", "--course", str(own), "--out", "ag.zip"], work, env)
    with zipfile.ZipFile(work / "ag.zip") as archive:
        packed = set(archive.namelist())
    assert "course/reference_solutions/doubling.py" in packed
    assert not any(name.startswith(("grader/problems/", "grader/reference")) for name in packed)
    refused = subprocess.run(
        [grader, "validate", "--course", str(own / "with_builtin.toml")],
        cwd=work, env=env, capture_output=True, text=True,
    )  # fmt: skip
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 2 and "problems.1.from" in said, said
    assert "attention-grader-course" in said and "Traceback" not in said


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
    tmp_path: Path, wheel: Path, course_wheel: Path, graded: Path
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
    sh([str(bin_dir / "pip"), "install", "-q", "--no-deps", str(wheel), str(course_wheel)],
       tmp_path, env)  # fmt: skip
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
    tmp_path: Path, wheel: Path, course_wheel: Path, layout: str
) -> None:
    """`pip install --target T` with PYTHONPATH=T, and `pip install --user`: the code that was
    there before the candidate's is the libraries', wherever it is installed. typing_extensions
    beside the wheel read a frame for the candidate's TypeVar, and was refused as their own."""
    env = clean_env()
    if layout == "target":
        target = tmp_path / "T"
        sh([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
            str(wheel), str(course_wheel), "typing_extensions"], tmp_path, env)  # fmt: skip
        env["PYTHONPATH"] = str(target)
        found = target
    else:
        env["PYTHONUSERBASE"] = str(tmp_path / "user")
        sh([sys.executable, "-m", "pip", "install", "-q", "--user", "--no-deps", str(wheel),
            str(course_wheel)], tmp_path, env)  # fmt: skip
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
