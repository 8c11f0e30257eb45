"""The `grader` command: thin wrappers over the library."""

from __future__ import annotations

import json
import os
import secrets
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from grader.cli.gradescope import gradescope
from grader.cli.sandbox import sandbox
from grader.courses.coursefile import CourseError, load_course, reveal_after_due
from grader.courses.spec import SpecError, Visibility
from grader.outputs import FORMATS, Options, read_reports, write_outputs
from grader.reports.junit import SuiteBy
from grader.reports.models import SubmissionReport, json_schema, write_report
from grader.reports.text import fraction
from grader.resume import SeedMismatch, batch_seed, saved_report
from grader.sandbox.backends.select import BackendUnavailable, make_backend

if TYPE_CHECKING:
    from grader.courses.catalog import Catalog, Problem

# Commands import what runs tensors (the catalog's checks, grading) when they run, so that
# `--help`, `schema`, `report` and `sandbox` start without importing torch.
BACKENDS = click.Choice(["docker", "local"])


def load_catalog(problems: tuple[str, ...] = ()) -> tuple[Catalog, list[Problem]]:
    from grader.courses.catalog import Catalog

    try:
        catalog = Catalog()
        return catalog, catalog.select(list(problems))
    except SpecError as exc:
        raise click.ClickException(str(exc)) from exc


def revealed(reveal: bool, course: Path | None) -> bool:
    try:
        return reveal_after_due(reveal, load_course(course) if course else None)
    except CourseError as exc:
        raise click.ClickException(str(exc)) from exc


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
            click.option(
                "--course",
                type=click.Path(exists=True, dir_okay=False, path_type=Path),
                help="course.toml: after its `due`, `after_due_date` checks are shown.",
            ),
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
    reveal: bool,
    course: Path | None,
    junit_by: str,
) -> None:
    opts = Options(out_dir, revealed(reveal, course), cast(SuiteBy, junit_by), echo=click.echo)
    try:
        written = write_outputs(reports, list(formats), opts)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    for path in written:
        click.echo(f"wrote {path}", err=True)


@click.group()
@click.version_option(package_name="attention-grader")
def cli() -> None:
    """Grade multi-head attention exercises in PyTorch."""


# -- candidates


@cli.command()
def problems() -> None:
    """List the problems and their points."""
    _, selected = load_catalog()
    width = max((len(p.spec.id) for p in selected), default=0)
    for problem in selected:
        spec = problem.spec
        hidden = sum(c.visibility is not Visibility.visible for c in spec.checks)
        click.echo(
            f"{spec.number:>3}  {spec.id:<{width}} {spec.max_score:>4g} pts  "
            f"({len(spec.checks) - hidden} visible, {hidden} hidden checks)  {spec.title}"
        )


@cli.command()
@click.argument("problem")
def show(problem: str) -> None:
    """Show PROBLEM's statement, contract and starter file."""
    from grader.reports.problem import describe

    _, (chosen,) = load_catalog((problem,))
    click.echo(describe(chosen))


@cli.command()
@click.argument("problem")
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
def init(problem: str, directory: Path) -> None:
    """Write PROBLEM's starter file into DIRECTORY (never over an existing file)."""
    _, (chosen,) = load_catalog((problem,))
    path = directory / chosen.spec.entry
    if path.exists():
        raise click.ClickException(f"{path} exists: not overwritten")
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
@click.option("--backend", type=BACKENDS, default="local", show_default=True)
@click.option("--seed", type=int, default=None, help="Seed for inputs and weights.")
@click.option("--reveal", is_flag=True, help="Also run the `after_due_date` checks.")
@click.option(
    "--course",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="course.toml: after its `due`, `after_due_date` checks run too.",
)
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
    from grader.reports.terminal import print_feedback
    from grader.selfcheck import NothingToCheck, attempted, check_submission

    catalog, selected = load_catalog(problems)
    if not problems:
        try:
            selected = attempted(catalog, path)
        except NothingToCheck as exc:
            raise click.ClickException(str(exc)) from exc
    try:
        chosen = make_backend(backend, isolation="container")  # one submission: no pool to warm
    except BackendUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    run_seed = seed if seed is not None else secrets.randbelow(2**31)
    start = time.monotonic()
    view, unseen = check_submission(
        path, catalog, selected, chosen, run_seed, revealed(reveal, course)
    )
    print_feedback(view, unseen)
    click.echo(f"Checked in {time.monotonic() - start:.1f} s on {chosen.name}", err=True)
    if view.grader_fault:
        sys.exit(2)
    if view.total < view.max_total:
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
    default="warm",
    show_default=True,
    help="Docker only: warm workers (long-lived containers that import torch once, each "
    "grading submissions one after another and cleaning up between them) or a fresh container "
    "per submission.",
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
@format_options
def grade(
    path: Path,
    out_dir: Path,
    backend: str,
    image: str | None,
    isolation: str,
    problems: tuple[str, ...],
    jobs: int,
    seed: int | None,
    timeout: float | None,
    memory_mb: int | None,
    resume: bool,
    formats: tuple[str, ...],
    reveal: bool,
    course: Path | None,
    junit_by: str,
) -> None:
    """Grade PATH: one submission, or a folder of them (sub-folders or zip files), a Gradescope
    export (folder or zip) or a folder of cloned Classroom repositories."""
    from grader.grade import Grader
    from grader.platforms.exports import ExportError, open_export
    from grader.reports.terminal import print_scores, progress

    catalog, selected = load_catalog(problems)
    try:
        export = click.get_current_context().with_resource(open_export(path, catalog))
    except ExportError as exc:
        raise click.ClickException(str(exc)) from exc
    for reason in export.skipped:
        click.secho(f"Skipped {reason}", fg="yellow", err=True)
    submissions = [s.path for s in export.submissions]
    students = {s.path: s.student for s in export.submissions if s.student is not None}
    click.echo(f"Reading {export.layout}: {len(submissions)} submission(s)", err=True)
    if not submissions:
        raise click.ClickException(f"no submissions in {path}")
    saved: dict[Path, SubmissionReport] = {}
    if resume:
        try:
            seed = batch_seed(submissions, out_dir, seed)
        except SeedMismatch as exc:
            raise click.ClickException(str(exc)) from exc
        ids = [p.spec.id for p in selected]
        for submission in submissions:
            report = saved_report(submission, out_dir, ids)
            if report is not None:
                saved[submission] = report
        click.echo(f"Resuming: {len(saved)} submission(s) already graded", err=True)
    todo = [s for s in submissions if s not in saved]
    fresh: dict[str, SubmissionReport] = {}
    if todo:
        try:
            chosen = make_backend(backend, image, isolation)
        except BackendUnavailable as exc:
            raise click.ClickException(str(exc)) from exc
        run_seed = seed if seed is not None else secrets.randbelow(2**31)
        click.echo(f"Grading {len(todo)} submission(s) on {chosen.name}, seed {run_seed}", err=True)
        grader = Grader(
            catalog,
            selected,
            chosen,
            run_seed,
            {"problem_seconds": timeout, "memory_mb": memory_mb},
        )
        try:
            with progress(len(todo)) as advance:

                def done(report: SubmissionReport) -> None:
                    write_report(report, out_dir)
                    advance(f"{report.submission} {fraction(report.total, report.max_total)}")

                for report in grader.grade_many(todo, jobs, done, students):
                    fresh[report.submission] = report
        finally:
            grader.close()
    reports = [saved.get(s) or fresh[s.resolve().name] for s in submissions]
    render(reports, ("csv", *formats), out_dir, reveal, course, junit_by)
    if "github-classroom" not in formats:
        print_scores(reports, {p.spec.id: p.spec.number for p in catalog.problems.values()})
    click.echo(f"Reports written to {out_dir}/", err=True)
    if any(r.grader_fault for r in reports):
        click.secho("A grader error occurred: see the reports' messages.", fg="red", err=True)
        sys.exit(2)


@cli.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where outputs go (default: DIRECTORY).",
)
@format_options
def report(
    directory: Path,
    out_dir: Path | None,
    formats: tuple[str, ...],
    reveal: bool,
    course: Path | None,
    junit_by: str,
) -> None:
    """Render outputs again from the JSON reports saved in DIRECTORY, without regrading.

    The gradebook CSV is always written; --format adds more.
    """
    reports = read_reports(directory)
    if not reports:
        raise click.ClickException(f"no submission reports in {directory}")
    render(reports, ("csv", *formats), out_dir or directory, reveal, course, junit_by)


@cli.command()
@click.argument("problems", nargs=-1)
@click.option("--backend", type=BACKENDS, default="local", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=os.cpu_count() or 1)
def validate(problems: tuple[str, ...], backend: str, seed: int, jobs: int) -> None:
    """Prove the hidden checks: references pass, starters and mutants do not."""
    from grader.courses.catalog import Catalog
    from grader.reports.terminal import print_outcomes
    from grader.validate import validate_problems

    try:
        catalog = Catalog()
        selected = catalog.select(list(problems))
        chosen = make_backend(backend)
        outcomes = validate_problems(catalog, selected, chosen, seed, jobs)
    except (SpecError, BackendUnavailable, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    print_outcomes(outcomes)
    misses = [o for o in outcomes if not o.ok]
    mutants = sum(o.kind == "mutant" for o in outcomes)
    click.echo(
        f"{len(outcomes) - len(misses)} passed, {len(misses)} failed "
        f"({len(selected)} problems, {mutants} mutants)"
    )
    if misses:
        sys.exit(1)


@cli.command()
def schema() -> None:
    """Print the JSON schema of a submission report."""
    click.echo(json.dumps(json_schema(), indent=2))


# -- platforms


@cli.group()
def classroom() -> None:
    """GitHub Classroom.

    \b
    What it cannot protect: the candidate owns the repository and its workflow. They can
    edit the workflow, skip the grader or fake its output, and read anything the job can
    read, including the hidden checks and reference solutions the job installs. Use
    Classroom scores as feedback; grade for credit where candidates do not control the
    runner (`grader grade` with the docker backend, or Gradescope). See docs/classroom.md.
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
@click.option("--force", is_flag=True, help="Replace an existing workflow file.")
def classroom_init(
    repo: Path, grader_url: str, ref: str | None, python_version: str, force: bool
) -> None:
    """Write .github/workflows/classroom.yml into REPO (the assignment's template)."""
    from grader.platforms.classroom.workflow import workflow, write_workflow

    if not repo.is_dir():
        raise click.ClickException(
            f"{repo} is not a folder: give the assignment's template repository (a clone)"
        )
    try:
        path = write_workflow(repo, workflow(grader_url, ref, python_version), force)
    except FileExistsError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"wrote {path}")


cli.add_command(sandbox)
cli.add_command(gradescope)
