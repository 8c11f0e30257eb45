"""The course file (`course.toml`): its name, when the checks marked `after_due_date` are
revealed, and the problems an assignment sets, with their points and visibility."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator

from grader.compat import tomllib
from grader.errors import GraderError
from grader.specs.problem import Visibility
from grader.strict import Strict


class CourseError(GraderError):
    """A course config that cannot be used."""


class CheckChange(Strict):
    """One check of a problem, changed for this course."""

    points: float | None = Field(None, gt=0)
    visibility: Visibility | None = None


class ProblemEntry(Strict):
    """`[[problems]]`: a problem the assignment sets, from the course's own `problems/` folder
    or from the built-in course (`from = "builtin"`); `points` rescales its checks to this
    total, `checks.NAME` changes one check's points or visibility."""

    model_config = ConfigDict(populate_by_name=True)

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    source: Literal["course", "builtin"] = Field("course", alias="from")
    points: float | None = Field(None, gt=0)
    checks: dict[str, CheckChange] = Field(default_factory=dict)


class Course(Strict):
    """`due = 2026-12-01T23:59:00Z`: after it, `after_due_date` checks are shown to candidates.
    Without `[[problems]]`, the course sets every problem folder it holds."""

    name: str = ""
    due: datetime | None = None
    problems: list[ProblemEntry] | None = None

    @field_validator("due")
    @classmethod
    def _aware(cls, due: datetime | None) -> datetime | None:
        if due is not None and due.tzinfo is None:
            raise ValueError("give the due date a time zone, e.g. 2026-12-01T23:59:00Z")
        return due

    @field_validator("problems")
    @classmethod
    def _once(cls, problems: list[ProblemEntry] | None) -> list[ProblemEntry] | None:
        ids = [p.id for p in problems or []]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"a problem is listed twice: {', '.join(twice)}")
        return problems

    def past_due(self, now: datetime | None = None) -> bool:
        return self.due is not None and (now or datetime.now(timezone.utc)) >= self.due


ALLOWED = (
    "name (text), due (a date and time with a time zone, e.g. 2026-12-01T23:59:00Z), "
    '[[problems]] (id, from = "course" or "builtin", points, checks.NAME.points, '
    "checks.NAME.visibility = visible, hidden or after_due_date)"
)


def load_course(path: Path) -> Course:
    """The course file, or a CourseError naming the file, the field and what is allowed."""
    try:
        return Course.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CourseError(f"{path}: {exc}") from exc
    except ValidationError as exc:
        problems = "; ".join(field_error(e) for e in exc.errors())
        raise CourseError(f"{path}: {problems}. Allowed fields: {ALLOWED}") from exc


def field_error(error: Any) -> str:
    """One pydantic error in words: `due: give the due date a time zone`."""
    where = ".".join(str(part) for part in error["loc"]) or "the file"
    if error["type"] == "extra_forbidden":
        return f"{where}: not a course field"
    return f"{where}: {str(error['msg']).removeprefix('Value error, ')}"


def reveal_after_due(reveal: bool, course: Course | None, now: datetime | None = None) -> bool:
    """Whether candidates see the `after_due_date` checks: asked for, or the due date passed."""
    return reveal or (course is not None and course.past_due(now))
