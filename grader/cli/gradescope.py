"""`grader gradescope ...`: the autograder zip, its wheels, and the run inside Gradescope."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.cli.course import course_option, opened
from grader.courses.paths import BUILTIN_COURSE
from grader.errors import GraderError
from grader.sandboxing import image

WHEELHOUSE = click.Path(exists=True, file_okay=False, path_type=Path)


@click.group()
def gradescope() -> None:
    """Gradescope.

    \b
    The zip's run_autograder starts the grader as root; the grader runs the candidate's
    code as the unprivileged `grader-student` account, its limits set before it starts, which
    can read neither the problems nor the reference solutions, nor write the results. See
    docs/gradescope.md.
    """


@gradescope.command("build")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("autograder.zip"),
    show_default=True,
)
@click.option(
    "--wheelhouse",
    type=WHEELHOUSE,
    help="Put these wheels in the zip: setup.sh then installs offline (`gradescope wheelhouse`).",
)
@course_option
def gradescope_build(out: Path, wheelhouse: Path | None, course: Path | None) -> None:
    """Build the autograder zip to upload to Gradescope: the grader and the full course, hidden
    checks and references included (candidates never see it)."""
    from grader.platforms.gradescope.autograder import build_autograder

    found = opened(course)  # proves the course loads before it is packed
    if found.catalog.is_kit:
        raise GraderError(f"{found.folder} is a candidate kit: pack the full course")
    packed = None if found.folder.resolve() == BUILTIN_COURSE.resolve() else found.folder
    click.echo(f"wrote {build_autograder(out, packed, wheelhouse)}")


@gradescope.command("wheelhouse")
@click.option("--dest", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option(
    "--python-version",
    default="3.10",
    show_default=True,
    help="The Python of Gradescope's base image (3.10 on Ubuntu 22.04, 3.12 on 24.04).",
)
@click.option("--torch-index-url", help="Extra package index serving torch CPU wheels.")
def gradescope_wheelhouse(dest: Path, python_version: str, torch_index_url: str | None) -> None:
    """Download every wheel setup.sh installs (torch CPU, the grader's dependencies, its build
    backend), for installing offline: pass DEST to `build --wheelhouse`, or mount it in the
    container and point GRADER_WHEELHOUSE at it."""
    from grader.platforms.gradescope.autograder import requirements

    wheels = image.download_wheelhouse(
        dest,
        packages=requirements(),
        python_version=python_version,
        torch_index_url=torch_index_url,
        on_line=lambda line: click.echo(f"  {line}", err=True),
    )
    for wheel in wheels:
        click.echo(wheel.name)


@gradescope.command("run")
@click.argument("submission", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--results",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where results.json is written.",
)
@click.option("--user", default=None, help="Run the candidate's code as this account.")
@course_option
def gradescope_run(submission: Path, results: Path, user: str | None, course: Path | None) -> None:
    """Grade SUBMISSION inside Gradescope's container (what run_autograder calls): the problem
    files at its top or in one folder of it."""
    from grader.platforms.gradescope.run import run_gradescope

    report = run_gradescope(submission, results, user, opened(course).catalog)
    click.echo(report.model_dump_json(indent=2))
    if report.grader_fault:
        sys.exit(2)
