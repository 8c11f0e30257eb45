"""The package as a user installs it: a wheel in a fresh virtualenv, run outside any checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def sh(argv: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...] = (0,)) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode in ok, f"{argv}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


Installed = tuple[Path, Path, dict[str, str]]  # the virtualenv's bin, a folder elsewhere, env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """A virtualenv (torch from the system's site-packages) holding only the built wheel."""
    tmp = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GRADER_"))}
    sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
        "-w", str(tmp / "dist"), str(ROOT)], tmp, env)  # fmt: skip
    (wheel,) = (tmp / "dist").glob("attention_grader-*.whl")
    sh([sys.executable, "-m", "venv", "--system-site-packages", str(tmp / "venv")], tmp, env)
    bin_dir = tmp / "venv" / "bin"
    sh([str(bin_dir / "pip"), "install", "-q", "--no-deps", "--no-index", str(wheel)], tmp, env)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    work = tmp / "elsewhere"
    work.mkdir()
    return bin_dir, work, env


def test_the_wheel_grades_outside_the_checkout(installed: Installed) -> None:
    bin_dir, work, env = installed
    where = sh([str(bin_dir / "python"), "-c", "import grader; print(grader.__file__)"], work, env)
    assert Path(where.strip()).is_relative_to(bin_dir.parent), where  # not the checkout's copy
    grader = str(bin_dir / "grader")
    listed = sh([grader, "problems"], work, env)
    assert len(listed.strip().splitlines()) == 11 and "split_heads" in listed
    complete = ROOT / "submissions" / "complete"
    checked = sh([grader, "check", str(complete), "--problem", "split_heads"], work, env)
    assert "split_heads" in checked
    sh([grader, "grade", str(ROOT / "submissions"), "--backend", "local", "--jobs", "2",
        "--seed", "3", "--out", "out"], work, env)  # fmt: skip
    full = json.loads((work / "out" / "complete.json").read_text())
    assert full["total"] == full["max_total"] == 180
    mistakes = json.loads((work / "out" / "classic_mistakes.json").read_text())
    assert 0 < mistakes["total"] < mistakes["max_total"]
    validated = sh([grader, "validate", "split_heads", "--jobs", "2"], work, env)
    assert " 0 failed" in validated
    assert "--wheelhouse" in sh([grader, "sandbox", "build", "--help"], work, env)
    context = work / "context"
    context.mkdir()
    assemble = (
        "import sys; from pathlib import Path; from grader.sandbox.paths import DOCKERFILE, "
        "WORKER_FILE; from grader.sandbox.image import TORCH_VERSION, assemble_context; "
        "assemble_context(Path(sys.argv[1]), WORKER_FILE, DOCKERFILE, None, TORCH_VERSION)"
    )
    sh([str(bin_dir / "python"), "-c", assemble, str(context)], work, env)
    assert {p.name for p in context.iterdir()} >= {"Dockerfile", "worker.py", "requirements.txt"}
    assert (context / "worker.py").read_bytes() == (ROOT / "grader/sandbox/worker.py").read_bytes()
