"""What the commands share: options named once, the one-line error, the batch's listener."""

from __future__ import annotations

import inspect
import shlex
import shutil
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from grader import api

FOLDER = click.Path(file_okay=False, path_type=Path)
EXISTING = click.Path(exists=True, file_okay=False, path_type=Path)


Callback = Callable[[click.Context, click.Parameter, Any], Any]


def parsed(parse: Callable[[Any], Any], many: bool = False) -> Callback:
    """A callback parsing a value (or, `many`, the tuple) with the library: its ValueError is
    the option's error."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        try:
            return parse(value) if many or value is not None else None
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx, param) from exc

    return callback


HANG = "  "
"""How much further than its line the lines it wraps onto are indented."""


def fitted(text: str, width: int) -> str:
    """`text` with each line wrapped to `width`, the lines it wraps onto indented `HANG` further
    than it; a word too long for a line (a path) is broken."""
    out = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        lead = line[: len(line) - len(body)]
        wrapped = textwrap.wrap(
            body, max(width - len(lead) - len(HANG), 20), break_on_hyphens=False,
            initial_indent=lead + HANG, subsequent_indent=lead + HANG,
        )  # fmt: skip
        out += [wrapped[0][len(HANG) :], *wrapped[1:]] if wrapped else [line]
    return "\n".join(out)


def echo(text: str, err: bool = False, nl: bool = True, wrap: bool = True) -> None:
    """Every line the commands print: as plain text (`api.plain`: no control character, no
    invisible one), since any may name a candidate's file or carry their text; in a terminal,
    wrapped to its width (`fitted`) unless `wrap` is off (documents: JSON, Markdown, code)."""
    click.echo(shown(text, err) if wrap else api.plain(text), err=err, nl=nl)


def shown(text: str, err: bool = False) -> str:
    """`text` as plain text, wrapped to the terminal's width (`fitted`) where it goes to one."""
    text = api.plain(text)
    if (sys.stderr if err else sys.stdout).isatty():
        text = fitted(text, shutil.get_terminal_size().columns)
    return text


def echo_err(line: str) -> None:
    echo(line, err=True)


def listener(with_progress: bool = False) -> api.Listener:
    """Status lines and what was written on stderr, warnings in yellow, and a progress bar; as
    plain text (they name the candidates' files)."""

    def note(line: str) -> None:
        echo_err(line)

    def warn(line: str) -> None:
        click.secho(shown(line, err=True), fg="yellow", err=True)

    bar = {"progress": api.progress} if with_progress else {}
    return api.Listener(note=note, warn=warn, wrote=lambda p: note(f"wrote {p}"), **bar)


course_option = click.option(
    "--course",
    type=click.Path(exists=True, path_type=Path),
    envvar=api.ENV_COURSE,
    show_envvar=True,
    help="The course: a folder with course.toml, problems/ and reference_solutions/, a candidate "
    "kit (`grader release`), or a course.toml. Default: the built-in course, where installed.",
)
seed_option = click.option(
    "--seed", type=int, help="Seed for inputs and weights (default: random)."
)
jobs_option = click.option(
    "--jobs", "-j", type=click.IntRange(min=1), default=api.JOBS, show_default="number of cores",
    help="Submissions graded (or solutions proved) in parallel.",
)  # fmt: skip


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def limit_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--timeout and --memory-mb: the limits a grading person may set over the specs'."""
    for option in (
        click.option("--memory-mb", type=click.IntRange(min=256),
                     help="Memory (MB) each submission's code may use, over what the worker "
                     "needs to start (over the specs; local and docker backends)."),
        click.option("--timeout", type=click.FloatRange(min=1),
                     help="Seconds per problem (over the specs)."),
    ):  # fmt: skip
        f = option(f)
    return f


def problem_option(help: str) -> Decorator:
    """--problem, repeated or comma-separated (`--problem 1,split_heads`), as --format."""
    return click.option(
        "--problem", "problems", multiple=True, metavar="P[,P...]",
        callback=parsed(api.listed, True),
        help=f"{help} Repeated or comma-separated; by id or number.",
    )  # fmt: skip


def backend_option(default: api.BackendName, own_code: bool = False) -> Decorator:
    """--backend; with `own_code` (a candidate's check of their own code), fork is offered."""
    chosen = [b.value for b in api.BackendName if own_code or b is not api.BackendName.fork]
    fork = " or fork (a fork of the grader's process: fastest, no boundary at all)"
    return click.option(
        "--backend", type=click.Choice(chosen), callback=parsed(api.BackendName),
        default=default.value, show_default=True,
        help="Where the code runs: docker (the sandbox: for anyone else's code), local (a "
        "subprocess with rlimits, as you, NOT a sandbox: only for code you trust)"
        + (fork if own_code else "") + ".",
    )  # fmt: skip


def output_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--format, --reveal, --course and --junit-by: how outputs are rendered."""
    for option in (
        click.option("--junit-by", type=click.Choice(api.SUITES), default=api.SUITES[0],
                     show_default=True, help="One JUnit testsuite per..."),
        course_option,
        click.option("--reveal", is_flag=True, help="Show `after_due_date` checks now."),
        click.option("--format", "formats", multiple=True, callback=parsed(api.parse_formats, True),
                     help=f"Extra outputs, repeated or comma-separated ({', '.join(api.FORMATS)})"
                     "; the JSON reports are always written."),
    ):  # fmt: skip
        f = option(f)
    return f


def example(*lines: str) -> str:
    """A command's epilog: example command lines, shown as written (click's `\\b`)."""
    return "\b\nExample:\n" + "\n".join(f"  {line}" for line in lines)


def summary(command: click.Command) -> str:
    """A command's summary in a list of commands: its `short_help`, else its help's whole first
    paragraph, on one line (the list wraps it)."""
    text = command.short_help or inspect.cleandoc(command.help or "").split("\n\n")[0]
    return " ".join(text.split())


class Listing(click.Group):
    """A group whose list of commands shows each one's whole summary, wrapped, where click's
    own cuts it to the width left (`...`)."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        commands = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        rows = [(name, summary(c)) for name, c in commands if c is not None and not c.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class Commands(Listing):
    """Turns every `GraderError` of its commands into one line, `Error: message`, with exit
    status 2, and keeps the arguments it was given (`resume_command` repeats them)."""

    def make_context(
        self, info_name: Any, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        ctx = super().make_context(info_name, list(args), parent, **extra)
        ctx.meta["argv"] = list(args)
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except api.GraderError as exc:
            raise failed(str(exc)) from exc


class Failure(click.ClickException):
    """`Error: message`, wrapped to the terminal's width when stderr is one."""

    def format_message(self) -> str:
        if not sys.stderr.isatty():
            return self.message
        prefix = "Error: "  # what click prints before the message
        return fitted(prefix + self.message, shutil.get_terminal_size().columns)[len(prefix) :]


def failed(message: str, exit_code: int = 2) -> click.ClickException:
    """`Error: message`, with this exit status (130 or the signal's for a stopped batch)."""
    error = Failure(api.plain(message))
    error.exit_code = exit_code
    return error


def resume_command() -> str:
    """This command line again, with `--resume`: it grades what is left with the same seed."""
    argv: list[str] = click.get_current_context().meta.get("argv", [])
    return shlex.join(["grader", *argv, *([] if "--resume" in argv else ["--resume"])])
