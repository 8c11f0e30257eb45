"""The `grader` command: parses options and calls `grader.api`.

A `GraderError` from any command is reported once, here, as a one-line error with exit status
2; a candidate's mistakes are verdicts, and set the exit status of `check` and `validate`.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from grader.cli.course import course_option, opened
from grader.cli.gradescope import gradescope
from grader.cli.sandbox import sandbox
from grader.courses.course import read_course
from grader.courses.coursefile import reveal_after_due
from grader.courses.spec import Visibility
from grader.errors import GraderError
from grader.outputs import FORMATS
from grader.reports.junit import SuiteBy
from grader.reports.models import SubmissionReport, json_schema
from grader.sandboxing.backends.base import LimitOverrides

if TYPE_CHECKING:
    from grader.courses.catalog import Catalog

# Commands import what runs tensors (the catalog's checks, grading) when they run, so that
# `--help`, `schema`, `report` and `sandbox` start without importing torch.
BACKENDS = click.Choice(["docker", "local"])


class Failed(click.ClickException):
    """A `GraderError`, shown as `Error: message`, with exit status 2 (130 or the signal's for
    a batch a signal stopped)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Commands(click.Group):
    """The command group that turns every `GraderError` of its commands into `Failed`, and
    keeps the arguments it was given (`resume_command` repeats them)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        argv = list(args)
        ctx = super().make_context(info_name, args, parent, **extra)
        ctx.meta["argv"] = argv
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GraderError as exc:
            raise Failed(str(exc)) from exc


def load_catalog(course: Path | None, checked: bool = True) -> Catalog:
    """The catalog of the course `--course` names (default: the built-in course); unchecked
    for commands that only read problems, which then start without torch."""
    return opened(course, checked).catalog


def full_course(course: Path | None) -> Catalog:
    """The course's catalog, refusing a candidate kit: it holds the visible checks only."""
    found = opened(course)
    if found.catalog.is_kit:
        raise GraderError(
            f"{found.folder} is a candidate kit (visible checks only): give the full course"
        )
    return found.catalog


def parse_shard(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> tuple[int, int] | None:
    """`--shard 2/3` -> (2, 3): the second of three slices."""
    if value is None:
        return None
    index, _, count = value.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise click.BadParameter(f"{value!r}: give K/N with 1 <= K <= N, e.g. 2/3", ctx, param)
    return int(index), int(count)


def split_formats(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    """`--format csv,html --format junit` -> (csv, html, junit), each one we know."""
    chosen = tuple(v.strip() for value in values for v in value.split(",") if v.strip())
    unknown = [v for v in chosen if v not in FORMATS]
    if unknown:
        raise click.BadParameter(
            f"{', '.join(unknown)} (choose from {', '.join(FORMATS)})", ctx, param
        )
    return chosen


def format_options(f: click.decorators.FC) -> click.decorators.FC:
    """--format, --reveal, --course and --junit-by: how outputs are rendered."""
    for option in reversed(
        [
            click.option(
                "--format",
                "formats",
                multiple=True,
                callback=split_formats,
                help=f"Extra outputs, repeated or comma-separated ({', '.join(FORMATS)}); the "
                "JSON reports are always written.",
            ),
            click.option(
                "--reveal",
                is_flag=True,
                help="Show `after_due_date` checks in candidate outputs now.",
            ),
            course_option,
            click.option(
                "--junit-by",
                type=click.Choice(["submission", "problem"]),
                default="submission",
                show_default=True,
                help="One JUnit testsuite per...",
            ),
        ]
    ):
        f = option(f)
    return f


def render(
    reports: list[SubmissionReport],
    formats: tuple[str, ...],
    out_dir: Path,
    shown: bool,
    junit_by: str,
) -> None:
    """Write the outputs; `shown`: whether candidate outputs show `after_due_date` checks."""
    from grader import api

    for path in api.render(reports, formats, out_dir, shown, cast(SuiteBy, junit_by), click.echo):
        click.echo(f"wrote {path}", err=True)


def resume_command() -> str:
    """This command line again, with `--resume`: it grades what is left with the same seed."""
    argv: list[str] = click.get_current_context().meta.get("argv", [])
    return shlex.join(["grader", *argv, *([] if "--resume" in argv else ["--resume"])])


@click.group(cls=Commands)
@click.version_option(package_name="attention-grader")
def cli() -> None:
    """Grade multi-head attention exercises in PyTorch."""


# -- candidates


@cli.command()
@course_option
def problems(course: Path | None) -> None:
    """List the course's problems and their points."""
    selected = list(load_catalog(course, checked=False).problems.values())
    width = max((len(p.spec.id) for p in selected), default=0)
    for problem in selected:
        spec = problem.spec
        hidden, _ = problem.hidden()
        visible = sum(c.visibility is Visibility.visible for c in spec.checks)
        click.echo(
            f"{spec.number:>3}  {spec.id:<{width}} {problem.points:>4g} pts  "
            f"({visible} visible, {hidden} hidden checks)  {spec.title}"
        )


@cli.command()
@click.argument("problem")
@course_option
def show(problem: str, course: Path | None) -> None:
    """Show PROBLEM's statement, contract and starter file."""
    from grader.reports.problem import describe

    (chosen,) = load_catalog(course, checked=False).select([problem])
    click.echo(describe(chosen))


@cli.command()
@click.argument("problem")
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@course_option
def init(problem: str, directory: Path, course: Path | None) -> None:
    """Write PROBLEM's starter file into DIRECTORY (never over an existing file)."""
    (chosen,) = load_catalog(course, checked=False).select([problem])
    path = directory / chosen.spec.entry
    if path.exists():
        raise GraderError(f"{path} exists: not overwritten")
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(chosen.starter, encoding="utf-8")
    click.echo(f"wrote {path}: run `grader check {directory}` to test it")


@cli.command()
@click.argument("path", default=".", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--problem",
    "problems",
    multiple=True,
    help="Check only these problems (default: those with a file in PATH).",
)
@click.option(
    "--backend",
    type=BACKENDS,
    default="local",
    show_default=True,
    help="Where the code runs: local (your own code: a subprocess with rlimits, as you, NOT a "
    "sandbox) or docker (the sandbox: for anyone else's code).",
)
@click.option("--seed", type=int, default=None, help="Seed for inputs and weights.")
@click.option("--reveal", is_flag=True, help="Also run the `after_due_date` checks.")
@course_option
def check(
    path: Path,
    problems: tuple[str, ...],
    backend: str,
    seed: int | None,
    reveal: bool,
    course: Path | None,
) -> None:
    """Check your work in PATH on the visible checks, with feedback on every failure.

    Hidden checks are not run here: their number and worth are shown, they count when graded.
    Exit status: 0 when every check run here passed, 1 otherwise, 2 on a grader error.
    """
    from grader import api
    from grader.reports.terminal import print_feedback

    start = time.monotonic()
    feedback = api.check(course, path, problems, backend, seed, reveal)
    print_feedback(feedback.view, feedback.unseen)
    click.echo(f"Checked in {time.monotonic() - start:.1f} s on {backend}", err=True)
    if feedback.view.grader_fault:
        sys.exit(2)
    if feedback.view.total < feedback.view.max_total:
        sys.exit(1)


# -- instructors


@cli.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("reports"),
    show_default=True,
    help="Where reports are written.",
)
@click.option(
    "--backend",
    type=BACKENDS,
    default="docker",
    show_default=True,
    help="Where submission code runs: docker (the sandbox; without an engine, grade refuses) or "
    "local (a subprocess with rlimits, NOT a security boundary: only for code you trust).",
)
@click.option("--image", default=None, help="Sandbox image for the docker backend.")
@click.option(
    "--isolation",
    type=click.Choice(["warm", "container"]),
    default=None,
    help="Docker only: warm workers (the default: long-lived containers that import torch "
    "once, each grading submissions one after another and cleaning up between them) or a fresh "
    "container per submission.",
)
@click.option("--problem", "problems", multiple=True, help="Grade only these problems.")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=os.cpu_count() or 1,
    show_default="number of cores",
    help="Submissions graded in parallel.",
)
@click.option(
    "--seed", type=int, default=None, help="Seed for inputs and weights (default: random)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=None,
    help="Seconds per problem (overrides the specs).",
)
@click.option(
    "--memory-mb",
    type=click.IntRange(min=256),
    default=None,
    help="Memory per submission (overrides the specs).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Skip submissions whose saved report has this grader version and content.",
)
@click.option(
    "--shard",
    callback=parse_shard,
    metavar="K/N",
    help="Grade only the K-th of N stable slices of the batch (with --seed; merge the shards' "
    "outputs with `grader report OUT1 OUT2 ... --out DIR`).",
)
@format_options
def grade(
    path: Path,
    out_dir: Path,
    backend: str,
    image: str | None,
    isolation: str | None,
    problems: tuple[str, ...],
    jobs: int,
    seed: int | None,
    timeout: float | None,
    memory_mb: int | None,
    resume: bool,
    shard: tuple[int, int] | None,
    formats: tuple[str, ...],
    reveal: bool,
    course: Path | None,
    junit_by: str,
) -> None:
    """Grade PATH: one submission, or a folder of them (sub-folders or zip files), a Gradescope
    export (folder or zip) or a folder of cloned Classroom repositories."""
    from grader import api
    from grader.reports.terminal import print_scores, progress

    if isolation is not None and backend != "docker":
        raise GraderError(
            "--isolation is for --backend docker: the local backend runs each submission in a "
            "process of its own, unsandboxed"
        )
    found = opened(course)
    catalog = found.catalog
    if catalog.is_kit:
        click.secho(
            "a candidate kit: grading its visible checks only (feedback, not credit)",
            fg="yellow",
            err=True,
        )
    limits = LimitOverrides(timeout, memory_mb)
    settings = api.Settings(
        backend,
        image,
        jobs,
        seed,
        limits,
        resume,
        isolation=isolation or "warm",
        shard=api.Shard(*shard) if shard else None,
    )
    listener = api.Listener(
        note=lambda line: click.echo(line, err=True),
        warn=lambda line: click.secho(line, fg="yellow", err=True),
        progress=progress,
    )
    try:
        reports = api.grade_path(catalog, path, out_dir, settings, problems, listener)
    except api.Interrupted as stop:
        raise Failed(f"{stop}. Grade the rest with: {resume_command()}", stop.exit_code) from stop
    render(reports, formats, out_dir, reveal_after_due(reveal, found.course), junit_by)
    if "github-classroom" not in formats:
        print_scores(reports, {p.spec.id: p.spec.number for p in catalog.problems.values()})
    click.echo(f"Reports written to {out_dir}/", err=True)
    if any(r.grader_fault for r in reports):
        click.secho("A grader error occurred: see the reports' messages.", fg="red", err=True)
        sys.exit(2)


@cli.command()
@click.argument(
    "directories",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where outputs go (default: DIRECTORY; required to merge several).",
)
@format_options
def report(
    directories: tuple[Path, ...],
    out_dir: Path | None,
    formats: tuple[str, ...],
    reveal: bool,
    course: Path | None,
    junit_by: str,
) -> None:
    """Render outputs again from the JSON reports saved in DIRECTORY, without regrading; or
    merge the output folders of a batch's shards into one (`--out` then says where: a shard's
    folder with --out is merged, and refused unless every shard of its batch is given).

    The gradebook CSV is always written; --format adds more.
    """
    from grader import api
    from grader.reports.models import write_report

    shown = reveal_after_due(reveal, read_course(course))
    (first, *others) = directories
    merging = bool(others) or (out_dir is not None and api.read_shard(first) is not None)
    if not merging:
        reports = api.saved_reports(first)
    elif out_dir is None:
        raise GraderError("merging shards needs --out: the folder of the merged outputs")
    else:
        reports = api.merged_reports(directories, out_dir)
        stale = api.stale_warning((r.submission for r in reports), out_dir, "these shards")
        if stale is not None:
            click.secho(stale, fg="yellow", err=True)
    target = out_dir or first
    if target.resolve() != first.resolve():  # a merge's --out is never one of its shards
        for saved in reports:
            write_report(saved, target)
    render(reports, formats, target, shown, junit_by)
    if merging:
        click.echo(f"merged {len(reports)} report(s) from {len(directories)} shards", err=True)


@cli.command()
@click.argument("problems", nargs=-1)
@click.option("--backend", type=BACKENDS, default="local", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=os.cpu_count() or 1)
@course_option
def validate(
    problems: tuple[str, ...], backend: str, seed: int, jobs: int, course: Path | None
) -> None:
    """Prove the checks: references and accepted solutions score full marks, starters and
    mutants lose their declared points."""
    from grader import api
    from grader.reports.terminal import print_outcomes

    catalog = full_course(course)
    outcomes = api.validate(catalog, problems, backend, seed, jobs)
    print_outcomes(outcomes)
    misses = [o for o in outcomes if not o.ok]
    mutants = sum(o.kind == "mutant" for o in outcomes)
    click.echo(
        f"{len(outcomes) - len(misses)} passed, {len(misses)} failed "
        f"({len({o.problem for o in outcomes})} problems, {mutants} mutants)"
    )
    if misses:
        sys.exit(1)


@cli.command()
@click.argument("problem")
@click.option(
    "--course",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="The course folder (made, with a course.toml, if it does not exist).",
)
@click.option("--symbol", default="solve", show_default=True, help="The function to write.")
def new(problem: str, course: Path, symbol: str) -> None:
    """Scaffold PROBLEM in a course folder: a small working problem to rewrite."""
    import re

    from grader.courses.paths import reference_path
    from grader.courses.scaffold import scaffold

    if not re.fullmatch(r"[a-z][a-z0-9_]*", problem):
        raise click.BadParameter("lower case letters, digits and _", param_hint="PROBLEM")
    folder = scaffold(course, problem, symbol)
    reference = reference_path(folder)
    click.echo(
        f"wrote {folder} and {reference}: edit them, then "
        f"`grader validate {problem} --course {course}`"
    )


@cli.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="The kit's folder (new or empty).",
)
@click.option("--seed", type=int, default=None, help="Seed of the kit's inputs (default: random).")
@course_option
def release(out: Path, seed: int | None, course: Path | None) -> None:
    """Write the candidate kit: statements, starters, contracts and what the visible checks need
    to run (`grader check --course KIT`), without references or hidden checks."""
    from grader.courses.release import release as write_kit

    found = opened(course)
    write_kit(found, out, seed)
    click.echo(f"wrote the candidate kit {out}: `grader check --course {out}` runs it")


@cli.command()
def schema() -> None:
    """Print the JSON schema of a submission report."""
    click.echo(json.dumps(json_schema(), indent=2))


# -- platforms


@cli.group()
def classroom() -> None:
    """GitHub Classroom.

    \b
    The workflow runs the visible checks of the course's candidate kit: feedback, since the
    candidate owns the repository and its workflow and can fake its output. Grade for credit
    with the full course where candidates do not control the runner (`grader grade --course
    DIR` over the class's cloned repositories, or Gradescope). See docs/classroom.md.
    """


@classroom.command("init")
@click.argument("repo", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--grader-url",
    required=True,
    help="Git URL of this grader (with its problems), cloned by the workflow.",
)
@click.option("--ref", default=None, help="Branch or tag of the grader to use.")
@click.option("--python", "python_version", default="3.11", show_default=True)
@click.option("--force", is_flag=True, help="Replace an existing workflow file and kit.")
@course_option
def classroom_init(
    repo: Path,
    grader_url: str,
    ref: str | None,
    python_version: str,
    force: bool,
    course: Path | None,
) -> None:
    """Write the course's candidate kit into REPO/.grader/kit and .github/workflows/classroom.yml,
    which runs it (REPO: the assignment's template repository)."""
    import shutil

    from grader.courses.release import release as write_kit
    from grader.platforms.classroom.workflow import KIT, WORKFLOW_PATH, workflow, write_workflow

    if not repo.is_dir():
        raise GraderError(
            f"{repo} is not a folder: give the assignment's template repository (a clone)"
        )
    if (repo / WORKFLOW_PATH).exists() and not force:
        raise GraderError(f"{repo / WORKFLOW_PATH} exists (use --force to replace it)")
    kit = repo / KIT
    if force:
        shutil.rmtree(kit, ignore_errors=True)
    write_kit(opened(course), kit)
    path = write_workflow(repo, workflow(grader_url, ref, python_version), force)
    click.echo(f"wrote {kit} and {path}")


cli.add_command(sandbox)
cli.add_command(gradescope)
