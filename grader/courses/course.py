"""A course folder (`course.toml`, `problems/<id>/`, `reference_solutions/<id>.py`), or a
candidate kit (`grader release`).

`--course DIR` (or `GRADER_COURSE`) names it; without one, the built-in attention course (a
checkout's, or the `attention-grader-course` distribution's: the grader's wheel holds none).
A course sets the problems its `[[problems]]` list names, each from its own `problems/` folder
or the built-in course, with changed points or visibility; without a list, every problem folder
it holds (and, with no `problems/` folder, the built-in ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.specs.course import Course, CourseError, ProblemEntry, load_course
from grader.specs.paths import COURSE_FILE, builtin_course, builtin_problems
from grader.specs.problem import SpecError

if TYPE_CHECKING:
    from grader.courses.catalog import Catalog, Problem

KIT_FILE = "kit.json"  # what marks a candidate kit (`grader release`)


def course_paths(path: Path | None) -> tuple[Path, Path]:
    """The course folder and its course file: `path` is a folder, or a course file in one."""
    if path is None:
        path = builtin_course()
    if path.is_file():
        return path.parent, path
    if not path.is_dir():
        raise CourseError(f"{path}: no such course folder")
    if not (path / COURSE_FILE).is_file():
        raise CourseError(f"{path}: not a course folder: it holds no {COURSE_FILE}")
    return path, path / COURSE_FILE


def read_course(path: Path | None) -> Course:
    """The course file alone (its name, due date and problem list), without loading problems."""
    return load_course(course_paths(path)[1])


@dataclass(frozen=True)
class OpenCourse:
    folder: Path
    course: Course
    catalog: Catalog


def open_course(path: Path | None, checked: bool = True) -> OpenCourse:
    """A course folder or a candidate kit with its problems; errors name the file and field.
    Unchecked (to list or show problems), specs are not bound to their checks."""
    folder, course_file = course_paths(path)
    if (folder / KIT_FILE).is_file():
        from grader.courses.kit import open_kit

        return OpenCourse(folder, load_course(course_file), open_kit(folder, checked))
    course = load_course(course_file)
    return OpenCourse(folder, course, course_catalog(folder, course_file, course, checked))


def course_catalog(
    folder: Path, course_file: Path, course: Course, checked: bool = True
) -> Catalog:
    from grader.courses.catalog import Catalog

    own = folder / "problems"
    if course.problems is None:
        return Catalog(own if own.is_dir() else builtin_problems(), checked)
    problems = [
        course_problem(folder, course_file, index, entry, checked)
        for index, entry in enumerate(course.problems)
    ]
    try:
        return Catalog.of(problems)
    except SpecError as exc:
        raise CourseError(f"{course_file}: {exc}") from exc


def course_problem(
    folder: Path, course_file: Path, index: int, entry: ProblemEntry, checked: bool = True
) -> Problem:
    """One `[[problems]]` entry: the problem's folder, loaded, with the course's changes."""
    from grader.courses.catalog import load_problem

    where = f"{course_file}: problems.{index}"
    try:
        home = builtin_problems() if entry.source == "builtin" else folder / "problems"
    except CourseError as exc:
        raise CourseError(f"{where}.from: {exc}") from exc
    if not (home / entry.id / "spec.toml").is_file():
        known = sorted(p.parent.name for p in home.glob("*/spec.toml"))
        raise CourseError(
            f"{where}.id: no problem {entry.id!r} in {home} (there: {', '.join(known) or 'none'})"
        )
    return changed(load_problem(home / entry.id, checked), entry, where)


def changed(problem: Problem, entry: ProblemEntry, where: str) -> Problem:
    """The problem with the entry's check changes, then its points rescaled to `points`."""
    from dataclasses import replace

    names = [c.name for c in problem.spec.checks]
    unknown = [name for name in entry.checks if name not in names]
    if unknown:
        raise CourseError(
            f"{where}.checks: {problem.spec.id} has no check {', '.join(map(repr, unknown))} "
            f"(its checks: {', '.join(names)})"
        )
    checks = []
    for check in problem.spec.checks:
        change = entry.checks.get(check.name)
        update = {} if change is None else change.model_dump(exclude_none=True)
        checks.append(check.model_copy(update=update))
    if entry.points is not None:
        scale = entry.points / sum(c.points for c in checks)
        checks = [c.model_copy(update={"points": round(c.points * scale, 6)}) for c in checks]
    return replace(problem, spec=problem.spec.model_copy(update={"checks": checks}))
