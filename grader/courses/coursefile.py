"""The course config (`course.toml`): when the checks marked `after_due_date` are revealed."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from grader.compat import tomllib
from grader.errors import GraderError


class CourseError(GraderError):
    """A course config that cannot be used."""


class Course(BaseModel):
    """`due = 2026-12-01T23:59:00Z`: after it, `after_due_date` checks are shown to candidates."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    due: datetime | None = None

    @field_validator("due")
    @classmethod
    def _aware(cls, due: datetime | None) -> datetime | None:
        if due is not None and due.tzinfo is None:
            raise ValueError("give the due date a time zone, e.g. 2026-12-01T23:59:00Z")
        return due

    def past_due(self, now: datetime | None = None) -> bool:
        return self.due is not None and (now or datetime.now(timezone.utc)) >= self.due


ALLOWED = "name (text), due (a date and time with a time zone, e.g. 2026-12-01T23:59:00Z)"


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
