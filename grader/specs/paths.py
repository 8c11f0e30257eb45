"""Where the built-in course lives: at the root of a checkout (`course.toml`, `problems/`,
`reference_solutions/`), or installed as its own distribution, `attention-grader-course` (the
package `attention_grader_course`, built by `packaging/course/`). The grader's own wheel holds
no course: a candidate who installs it gets no reference and no hidden check."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from importlib.util import find_spec
from pathlib import Path

from grader.specs.course import CourseError

COURSE_FILE = "course.toml"
REFERENCES = "reference_solutions"
COURSE_PACKAGE = "attention_grader_course"
NO_COURSE = (
    "the built-in course is not installed (the grader's wheel holds none): pass --course DIR "
    "(or set GRADER_COURSE), a course folder or a candidate kit, or install the built-in course "
    "(the attention-grader-course wheel)"
)


def package_path(package: str, *parts: str) -> Path:
    """A file or folder shipped inside `package`, as a path on disk (the grader is installed
    unzipped, as pip installs it)."""
    found = files(package).joinpath(*parts)
    if not isinstance(found, Path):
        raise RuntimeError(f"{package} is not installed as files on disk: reinstall it with pip")
    return found


@cache
def installed_course() -> Path | None:
    """The built-in course folder: the checkout the package runs from, or the installed course
    package; None where there is neither (the grader's wheel alone)."""
    checkout = package_path("grader").resolve().parent
    if (checkout / COURSE_FILE).is_file():
        return checkout
    if find_spec(COURSE_PACKAGE) is not None:
        installed = package_path(COURSE_PACKAGE)
        if (installed / COURSE_FILE).is_file():
            return installed
    return None


def builtin_course() -> Path:
    """The built-in course folder, or a CourseError saying how to get one."""
    found = installed_course()
    if found is None:
        raise CourseError(NO_COURSE)
    return found


def builtin_problems() -> Path:
    return builtin_course() / "problems"


def builtin_references() -> Path:
    return builtin_course() / REFERENCES


def reference_path(problem_folder: Path) -> Path:
    """Where a course keeps a problem's reference solution: `reference_solutions/<id>.py`
    beside its `problems/` folder, out of what a candidate kit copies."""
    return problem_folder.parent.parent / REFERENCES / f"{problem_folder.name}.py"
