"""`grader`: parses options and calls the library's front door (`grader.api`), nothing else."""

from __future__ import annotations

import dataclasses
import gc
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import click

from grader import api
from grader.cli.platforms import classroom, classroom50, gradescope, sandbox
from grader.cli.shared import (
    EXISTING,
    FOLDER,
    Commands,
    backend_option,
    course_option,
    echo,
    echo_err,
    example,
    failed,
    jobs_option,
    limit_options,
    listener,
    output_options,
    parsed,
    problem_option,
    resume_command,
    seed_option,
)  # fmt: skip

option = click.option
EPILOG = (
    "Run `grader COMMAND --help` for a command's options and an example. Shell completion: "
    '`eval "$(_GRADER_COMPLETE=bash_source grader)"` in ~/.bashrc (zsh_source, fish_source '
    "for zsh and fish)."
)


@click.group(cls=Commands, epilog=EPILOG)
@click.version_option(package_name="attention-grader")
def cli() -> None:
    """Grade multi-head attention exercises in PyTorch."""


# -- candidates


json_option = option("--json", "as_json", is_flag=True, help="Print JSON, for tools.")


@cli.command(epilog=example("grader problems --course my-course"))
@course_option
@json_option
def problems(course: Path | None, as_json: bool) -> None:
    """List the course's problems and their points."""
    summaries = api.problem_summaries(course)
    if as_json:
        echo(json.dumps([dataclasses.asdict(s) for s in summaries], indent=2), wrap=False)
    else:
        api.print_problems(summaries)


@cli.command(epilog=example("grader show split_heads"))
@click.argument("problem")
@course_option
def show(problem: str, course: Path | None) -> None:
    """Show PROBLEM's statement, contract and starter file."""
    echo(api.describe_problem(course, problem), wrap=False)


@cli.command(epilog=example("grader init split_heads my-work"))
@click.argument("problem")
@click.argument("directory", default=".", type=FOLDER)
@course_option
def init(problem: str, directory: Path, course: Path | None) -> None:
    """Write PROBLEM's starter file into DIRECTORY (never over an existing file)."""
    path = api.write_starter(course, problem, directory)
    again = ["grader", "check", str(directory), *(["--course", str(course)] if course else [])]
    echo(f"wrote {path}: run `{shlex.join(again)}` to test it")


@cli.command(epilog=example("grader check my-work --problem split_heads,mha_by_loop"))
@click.argument("path", default=".", type=click.Path(exists=True, path_type=Path))
@problem_option("Only these (default: those in PATH).")
@backend_option(api.CHECK_BACKEND, own_code=True)
@seed_option
@option("--reveal", is_flag=True, help="Also run the `after_due_date` checks.")
@limit_options
@course_option
@json_option
def check(path: Path, course: Path | None, as_json: bool, **options: Any) -> None:
    """Check your work in PATH (a folder, a zip file of it, or one problem's file or notebook)
    on the visible checks, with feedback on every failure.

    Hidden checks are not run here: their number and worth are shown, they count when graded.
    Exit status: 0 when every check run here passed, 1 otherwise, 2 on a grader error.
    """
    start = time.monotonic()
    feedback = api.check(path, course_path=course, **options)
    if as_json:
        echo(json.dumps(feedback.as_json(), indent=2), wrap=False)
    else:
        api.print_feedback(feedback)
    echo_err(f"Checked in {time.monotonic() - start:.1f} s on {options['backend']}")
    sys.exit(feedback.exit_code)


# -- instructors


@cli.command(epilog=example("grader grade submissions/ --out reports --format markdown,html"))
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@option("--out", "out_dir", type=FOLDER, default=Path("reports"), show_default=True)
@backend_option(api.Settings.backend)
@option("--image", help="Sandbox image for the docker backend.")
@option(
    "--isolation",
    type=click.Choice(api.DOCKER_ISOLATION),
    callback=parsed(api.Isolation),
    help="Docker only: warm workers (the default: containers that import torch once and "
    "grade one submission after another, cleaned between them) or a fresh container each.",
)
@problem_option("Grade only these problems.")
@jobs_option
@seed_option
@limit_options
@option(
    "--secret-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help=f"A file holding the secret the inputs are drawn with, beside the seed (default: "
    f"${api.ENV_SECRET}, else the one kept in the out folder, made there if need be).",
)
@option("--resume", is_flag=True, help="Skip submissions whose saved report is valid.")
@option(
    "--shard",
    callback=parsed(api.Shard.parse),
    metavar="K/N",
    help="Grade only the K-th of N stable slices (with --seed; merge them: `grader report OUT1 "
    "OUT2 ... --out DIR`).",
)
@output_options
def grade(path: Path, out_dir: Path, course: Path | None, **options: Any) -> None:
    """Grade PATH: one submission, or a folder of them (sub-folders or zip files), a Gradescope
    export (folder or zip) or a folder of cloned Classroom repositories."""
    kept = {k: options.pop(k) for k in ("formats", "reveal", "junit_by", "problems")}
    settings = api.batch_settings(**options)
    try:
        graded = api.grade(path, out_dir=out_dir, course_path=course, settings=settings,
                           listener=listener(with_progress=True), **kept)  # fmt: skip
    except api.Interrupted as stop:
        raise failed(f"{stop}. Grade the rest with: {resume_command()}", stop.exit_code) from stop
    sys.exit(api.print_graded(graded, out_dir, kept["formats"]))


@cli.command(epilog=example("grader report reports --format html"))
@click.argument("directories", nargs=-1, required=True, type=EXISTING)
@option("--out", "out_dir", type=FOLDER, help="Where outputs go (default: DIRECTORY).")
@output_options
def report(directories: tuple[Path, ...], course: Path | None, **options: Any) -> None:
    """Render outputs again from the JSON reports saved in DIRECTORY, without regrading; or
    merge the output folders of a batch's shards into one (`--out` then says where: a shard's
    folder with --out is merged, and refused unless every shard of its batch is given).

    The gradebook CSV is always written; --format adds more.
    """
    api.report(directories, course_path=course, listener=listener(), **options)


@cli.command(epilog=example("grader validate split_heads --course my-course"))
@click.argument("problems", nargs=-1)
@backend_option(api.CANDIDATE_BACKEND)
@option("--seed", type=int, default=0, show_default=True)
@jobs_option
@limit_options
@option("--probes", "table", is_flag=True, help="Also print what each probe finds (Markdown).")
@option("--strict-probes", is_flag=True, help="Fail when a probe finds nothing the others do not.")
@course_option
def validate(course: Path | None, table: bool, strict_probes: bool, **options: Any) -> None:
    """Prove the checks: references and accepted solutions score full marks, starters and
    mutants lose their declared points. Says which probes find nothing the others do not."""
    probes: dict[str, Any] = {}
    outcomes = api.validate(course, probes=probes, **options)
    echo(api.print_outcomes(outcomes))
    idle = api.weighed_probes(probes)
    if table or idle:
        echo(api.weighed_probes(probes, table), wrap=False)
    failed = not all(o.ok for o in outcomes) or (strict_probes and bool(idle))
    sys.exit(1 if failed else 0)


@cli.command(epilog=example("grader new attn_scale --course my-course --module"))
@click.argument("problem")
@option("--course", type=FOLDER, required=True, help="The course folder (made if need be).")
@option("--module", is_flag=True, help="An nn.Module's problem (default: a function's).")
@option("--symbol", help="The function or class to write (default: solve, or the id's).")
def new(problem: str, course: Path, **options: Any) -> None:
    """Scaffold PROBLEM in a course folder: a small working problem to rewrite."""
    folder, reference = api.new_problem(course, problem, **options)
    echo(f"wrote {folder} and {reference}: edit them, then `grader validate {problem} "
               f"--course {course}`")  # fmt: skip


@cli.command(epilog=example("grader release --course my-course --out kit"))
@option("--out", type=FOLDER, required=True, help="The kit's folder (new or empty).")
@option("--seed", type=int, help="Seed of the kit's inputs (default: random).")
@course_option
def release(out: Path, seed: int | None, course: Path | None) -> None:
    """Write the candidate kit: statements, starters, contracts and what the visible checks need
    to run (`grader check --course KIT`), without references or hidden checks."""
    api.release(course, out, seed=seed)
    readme = out / api.KIT_README
    echo(f"wrote the candidate kit {out}: `grader check --course {out}` runs it, and "
               f"{readme} tells candidates how to check and hand in their work")  # fmt: skip


@cli.command(epilog=example("grader checks > docs/checks.md"))
def checks() -> None:
    """Print the authoring guide: every spec field, check, diagnosis form and mistake."""
    echo(api.authoring_guide(), nl=False, wrap=False)


@cli.command(epilog=example("grader schema similarity"))
@click.argument("kind", type=click.Choice(list(api.SCHEMAS)), default="report")
def schema(kind: str) -> None:
    """Print the JSON schema of a submission report, or of similarity.json."""
    echo(json.dumps(api.report_schema(kind), indent=2), wrap=False)


@cli.command(epilog=example("grader similarity submissions/ --out reports"))
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@option("--out", "out_dir", type=FOLDER, help="Also write DIR/similarity.json.")
@problem_option("Only these problems.")
@course_option
def similarity(path: Path, course: Path | None, **options: Any) -> None:
    """Rank the pairs of submissions in PATH (what `grade` reads) by similarity, per problem,
    flagging those to look at. The starter's code is discounted, the class is its own yardstick;
    no score changes. A score (0 to 1) is below 1 for identical files where their code is like
    the course's own (reference, accepted solutions): what a pair shares of it counts for less."""
    compared = api.similarity(path, course_path=course, **options)
    echo("\n".join(api.similarity_lines(compared)))


for group in (classroom, classroom50, gradescope, sandbox):
    cli.add_command(group)


def main() -> None:
    """The `grader` command: it stops surely on Ctrl-C or SIGTERM (`api.take_signals`). What
    it imported lives until the process ends, so it is frozen first: the interpreter's exit
    then passes it over (0.3 s of tearing torch down)."""
    api.take_signals()
    try:
        cli()
    finally:
        gc.freeze()
