"""Where the built-in course lives: at the root of a checkout (`course.toml`, `problems/`,
`reference_solutions/`), and in an installed wheel as package data under `grader/_course/` (the
build copies it there, `setup.py`), found through `importlib.resources`."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

COURSE_FILE = "course.toml"
REFERENCES = "reference_solutions"


def package_path(package: str, *parts: str) -> Path:
    """A file or folder shipped inside `package`, as a path on disk (the grader is installed
    unzipped, as pip installs it)."""
    found = files(package).joinpath(*parts)
    if not isinstance(found, Path):
        raise RuntimeError(f"{package} is not installed as files on disk: reinstall it with pip")
    return found


def builtin_course() -> Path:
    """The built-in course folder: the wheel's copy, or the checkout the package runs from."""
    shipped = package_path("grader", "_course")
    if (shipped / COURSE_FILE).is_file():
        return shipped
    checkout = package_path("grader").resolve().parent
    if (checkout / COURSE_FILE).is_file():
        return checkout
    raise RuntimeError("the built-in course is missing from this install: reinstall the grader")


def reference_path(problem_folder: Path) -> Path:
    """Where a course keeps a problem's reference solution: `reference_solutions/<id>.py`
    beside its `problems/` folder, out of what a candidate kit copies."""
    return problem_folder.parent.parent / REFERENCES / f"{problem_folder.name}.py"


BUILTIN_COURSE = builtin_course()
PROBLEMS_DIR = BUILTIN_COURSE / "problems"
REFERENCES_DIR = BUILTIN_COURSE / REFERENCES
