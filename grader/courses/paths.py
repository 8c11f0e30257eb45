"""Where the built-in course lives: package data, found through `importlib.resources`, so an
installed wheel finds it as a checkout does."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def package_path(package: str, *parts: str) -> Path:
    """A file or folder shipped inside `package`, as a path on disk (the grader is installed
    unzipped, as pip installs it)."""
    found = files(package).joinpath(*parts)
    if not isinstance(found, Path):
        raise RuntimeError(f"{package} is not installed as files on disk: reinstall it with pip")
    return found


BUILTIN_COURSE = package_path("grader.courses", "attention")
PROBLEMS_DIR = BUILTIN_COURSE / "problems"
