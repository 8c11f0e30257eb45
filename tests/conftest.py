"""Shared fixtures: the shipped catalog, a local-backend grader factory, and the grader and the
built-in course built as wheels and installed in fresh virtualenvs."""

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


def build_wheel(tmp_path_factory: pytest.TempPathFactory, project: Path, name: str) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
        "-w", str(dist), str(project)], dist, clean_env())  # fmt: skip
    (built,) = dist.glob(f"{name}-*.whl")
    return built


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The grader built as a wheel: what candidates install, with no course."""
    return build_wheel(tmp_path_factory, ROOT, "attention_grader")


@pytest.fixture(scope="session")
def course_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built-in course built as its own wheel, for instructors."""
    return build_wheel(tmp_path_factory, ROOT / "packaging" / "course", "attention_grader_course")


def install(tmp_path_factory: pytest.TempPathFactory, wheels: list[Path]) -> Installed:
    """A virtualenv (torch from the system's site-packages) holding only these wheels."""
    tmp = tmp_path_factory.mktemp("wheel")
    env = clean_env()
    sh([sys.executable, "-m", "venv", "--system-site-packages", str(tmp / "venv")], tmp, env)
    bin_dir = tmp / "venv" / "bin"
    sh([str(bin_dir / "pip"), "install", "-q", "--no-deps", "--no-index", *map(str, wheels)],
       tmp, env)  # fmt: skip
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    work = tmp / "elsewhere"
    work.mkdir()
    return bin_dir, work, env


@pytest.fixture(scope="session")
def installed(
    tmp_path_factory: pytest.TempPathFactory, wheel: Path, course_wheel: Path
) -> Installed:
    """An instructor's install: the grader and the built-in course."""
    return install(tmp_path_factory, [wheel, course_wheel])


@pytest.fixture(scope="session")
def candidate(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Installed:
    """A candidate's install: the grader alone."""
    return install(tmp_path_factory, [wheel])


WHEEL_FIXTURES = {"wheel", "course_wheel", "installed", "candidate"}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`-n 2 --dist loadgroup`, the test command's), the Docker tests run
    one after another on one worker (each checks that no grader container is left), and the
    tests of the built wheels on one worker, which builds and installs them once."""
    for item in items:
        if item.get_closest_marker("docker"):
            item.add_marker(pytest.mark.xdist_group("docker"))
        elif WHEEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("wheels"))
