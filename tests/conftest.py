"""Shared fixtures: the shipped catalog, a local-backend grader factory, and the package built
as a wheel and installed in a fresh virtualenv."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.sandboxing.backends.base import LimitOverrides
from grader.sandboxing.backends.local import LocalBackend

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return Catalog()


@pytest.fixture(scope="session")
def make_grader(catalog: Catalog) -> Iterator[Callable[..., Grader]]:
    """Graders on the local backend, one per distinct set of problems and options."""
    made: dict[tuple[object, ...], Grader] = {}

    def make(
        problems: list[str] | None = None, seed: int = 0, problem_seconds: float | None = None
    ) -> Grader:
        key = (tuple(problems or []), seed, problem_seconds)
        if key not in made:
            limits = LimitOverrides(problem_seconds=problem_seconds)
            made[key] = Grader(catalog, catalog.select(problems), LocalBackend(), seed, limits)
        return made[key]

    yield make
    for grader in made.values():
        grader.close()


def sh(argv: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...] = (0,)) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode in ok, f"{argv}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


Installed = tuple[Path, Path, dict[str, str]]  # the virtualenv's bin, a folder elsewhere, env


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GRADER_"))}


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package built as a wheel."""
    dist = tmp_path_factory.mktemp("dist")
    sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
        "-w", str(dist), str(ROOT)], dist, clean_env())  # fmt: skip
    (built,) = dist.glob("attention_grader-*.whl")
    return built


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Installed:
    """A virtualenv (torch from the system's site-packages) holding only the built wheel."""
    tmp = tmp_path_factory.mktemp("wheel")
    env = clean_env()
    sh([sys.executable, "-m", "venv", "--system-site-packages", str(tmp / "venv")], tmp, env)
    bin_dir = tmp / "venv" / "bin"
    sh([str(bin_dir / "pip"), "install", "-q", "--no-deps", "--no-index", str(wheel)], tmp, env)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    work = tmp / "elsewhere"
    work.mkdir()
    return bin_dir, work, env
