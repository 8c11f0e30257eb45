"""What the commands share: options named once, the one-line error, the batch's listener."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import click

from grader import api

FOLDER = click.Path(file_okay=False, path_type=Path)
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class Failed(click.ClickException):
    """A `GraderError`, shown as `Error: message`, with exit status 2 (130 or the signal's for
    a batch a signal stopped)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def echo_err(line: str) -> None:
    click.echo(line, err=True)


def listener(
    progress: Callable[[int], AbstractContextManager[Callable[[str], None]]] | None = None,
) -> api.Listener:
    """Status lines and what was written on stderr, warnings in yellow, and a progress bar."""
    return api.Listener(
        note=echo_err,
        warn=lambda line: click.secho(line, fg="yellow", err=True),
        wrote=lambda path: echo_err(f"wrote {path}"),
        **({"progress": progress} if progress else {}),
    )


def course_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--course DIR (or $GRADER_COURSE): a course folder, a candidate kit, or a course.toml."""
    return click.option(
        "--course",
        type=click.Path(exists=True, path_type=Path),
        envvar=api.ENV_COURSE,
        show_envvar=True,
        help="The course: a folder with course.toml, problems/ and reference_solutions/, a "
        "candidate kit (`grader release`), or a course.toml. Default: the built-in course.",
    )(f)


def backend_option(default: api.BackendName, own_code: bool = False) -> Decorator:
    """--backend; with `own_code` (a candidate's check of their own code), fork is offered."""
    chosen = [b for b in api.BackendName if own_code or b is not api.BackendName.fork]
    fork = " or fork (a fork of the grader's process: fastest, no boundary at all)"
    return click.option(
        "--backend",
        type=click.Choice([b.value for b in chosen]),
        callback=lambda _ctx, _param, value: api.BackendName(value),
        default=default.value,
        show_default=True,
        help="Where the code runs: docker (the sandbox: for anyone else's code), local (a "
        "subprocess with rlimits, as you, NOT a sandbox: only for code you trust)"
        + (fork if own_code else "")
        + ".",
    )


seed_option = click.option(
    "--seed", type=int, help="Seed for inputs and weights (default: random)."
)


def split_formats(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> Any:
    """`--format csv,html --format junit` -> (csv, html, junit), each one we know."""
    chosen = tuple(v.strip() for value in values for v in value.split(",") if v.strip())
    unknown = [v for v in chosen if v not in api.FORMATS]
    if unknown:
        known = ", ".join(api.FORMATS)
        raise click.BadParameter(f"{', '.join(unknown)} (choose from {known})", ctx, param)
    return chosen


def output_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--format, --reveal, --course and --junit-by: how outputs are rendered."""
    options: list[Callable[[Any], Any]] = [
        click.option(
            "--format",
            "formats",
            multiple=True,
            callback=split_formats,
            help=f"Extra outputs, repeated or comma-separated ({', '.join(api.FORMATS)}); the "
            "JSON reports are always written.",
        ),
        click.option("--reveal", is_flag=True, help="Show `after_due_date` checks now."),
        course_option,
        click.option(
            "--junit-by",
            type=click.Choice(api.SUITES),
            default=api.SUITES[0],
            show_default=True,
            help="One JUnit testsuite per...",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


DEFAULTS = api.Settings()
jobs_option = click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=api.JOBS,
    show_default="number of cores",
    help="Submissions graded (or solutions proved) in parallel.",
)


class Commands(click.Group):
    """Turns every `GraderError` of its commands into `Failed` (one line, exit 2), and keeps the
    arguments it was given (`resume_command` repeats them)."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> click.Context:
        argv = list(args)
        ctx = super().make_context(info_name, args, parent, **extra)
        ctx.meta["argv"] = argv
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except api.GraderError as exc:
            raise Failed(str(exc)) from exc


def resume_command() -> str:
    """This command line again, with `--resume`: it grades what is left with the same seed."""
    argv: list[str] = click.get_current_context().meta.get("argv", [])
    return shlex.join(["grader", *argv, *([] if "--resume" in argv else ["--resume"])])


def parse_shard(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """`--shard 2/3` -> Shard(2, 3): the second of three slices."""
    if value is None:
        return None
    index, _, count = value.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise click.BadParameter(f"{value!r}: give K/N with 1 <= K <= N, e.g. 2/3", ctx, param)
    return api.Shard(int(index), int(count))
