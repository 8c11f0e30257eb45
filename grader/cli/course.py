"""`--course`: the course a command reads its problems from, shared by every such command."""

from __future__ import annotations

from pathlib import Path

import click

from grader.courses.course import OpenCourse, open_course

ENV = "GRADER_COURSE"


def course_option(f: click.decorators.FC) -> click.decorators.FC:
    """--course DIR (or $GRADER_COURSE): a course folder, a candidate kit, or a course.toml."""
    return click.option(
        "--course",
        type=click.Path(exists=True, path_type=Path),
        envvar=ENV,
        show_envvar=True,
        help="The course: a folder with course.toml and problems/, a candidate kit (`grader "
        "release`), or a course.toml (its folder). Default: the built-in attention course.",
    )(f)


def opened(course: Path | None, checked: bool = True) -> OpenCourse:
    """The course (`checked`: its specs bound to their checks, which import torch); a
    `GraderError` names the file and the field at fault."""
    return open_course(course, checked)
