"""The `grader` command: thin wrappers over the library."""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path

import click

from grader.backends.select import BackendUnavailable, make_backend
from grader.catalog import Catalog
from grader.console import print_scores
from grader.grade import Grader, find_submissions
from grader.report import json_schema, write_report
from grader.spec import SpecError


@click.group()
@click.version_option(package_name="attention-grader")
def cli() -> None:
    """Grade multi-head attention exercises in PyTorch."""


@cli.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports"), show_default=True, help="Where reports are written.")
@click.option("--backend", type=click.Choice(["auto", "docker", "local"]), default="auto",
              show_default=True, help="Where submission code runs.")
@click.option("--image", default=None, help="Sandbox image for the docker backend.")
@click.option("--problem", "problems", multiple=True, help="Grade only these problems.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=os.cpu_count() or 1,
              show_default="number of cores", help="Submissions graded in parallel.")
@click.option("--seed", type=int, default=None, help="Seed for inputs and weights (default: random).")
@click.option("--timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds per problem (overrides the specs).")
@click.option("--memory-mb", type=click.IntRange(min=256), default=None,
              help="Memory per submission (overrides the specs).")
def grade(
    path: Path, out_dir: Path, backend: str, image: str | None, problems: tuple[str, ...],
    jobs: int, seed: int | None, timeout: float | None, memory_mb: int | None,
) -> None:
    """Grade PATH: one submission, or a folder with one submission per sub-folder."""
    try:
        catalog = Catalog()
        selected = catalog.select(list(problems))
        chosen = make_backend(backend, lambda m: click.secho(m, fg="yellow", err=True), image)
    except (SpecError, BackendUnavailable) as exc:
        raise click.ClickException(str(exc)) from exc
    submissions = find_submissions(path, catalog)
    if not submissions:
        raise click.ClickException(f"no submissions in {path}")
    run_seed = seed if seed is not None else secrets.randbelow(2**31)
    click.echo(f"Grading {len(submissions)} submission(s) on {chosen.name}, seed {run_seed}",
               err=True)
    grader = Grader(catalog, selected, chosen, run_seed,
                    {"problem_seconds": timeout, "memory_mb": memory_mb})
    try:
        reports = grader.grade_many(submissions, jobs, lambda r: write_report(r, out_dir))
    finally:
        grader.close()
    from grader.render.csv import write_summary_csv

    write_summary_csv(reports, out_dir / "summary.csv")
    print_scores(reports)
    click.echo(f"Reports written to {out_dir}/", err=True)
    if any(r.grader_fault for r in reports):
        click.secho("A grader error occurred: see the reports' messages.", fg="red", err=True)
        sys.exit(2)


@cli.command()
def schema() -> None:
    """Print the JSON schema of a submission report."""
    click.echo(json.dumps(json_schema(), indent=2))
