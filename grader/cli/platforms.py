"""`grader classroom`, `grader classroom50`, `grader gradescope` and `grader sandbox`: the
platforms and the image."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from grader import api
from grader.cli.shared import FOLDER, course_option, echo_err

WHEELS = click.Path(exists=True, file_okay=False, path_type=Path)
INDEX = click.option("--torch-index-url", help="Extra package index serving torch CPU wheels.")


def indented(line: str) -> None:
    echo_err(f"  {line}")


@click.group()
def classroom() -> None:
    """GitHub Classroom.

    \b
    The workflow runs the visible checks of the course's candidate kit: feedback, since the
    candidate owns the repository and its workflow and can fake its output. Grade for credit
    with the full course where candidates do not control the runner (`grader grade --course
    DIR` over the class's cloned repositories, or Gradescope). See docs/classroom.md.
    """


@classroom.command("init")
@click.argument("repo", default=".", type=FOLDER)
@click.option("--grader-url", required=True, help="Git URL of this grader, cloned by the workflow.")
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
    kit, path = api.classroom_init(
        repo,
        grader_url=grader_url,
        ref=ref,
        course_path=course,
        python_version=python_version,
        force=force,
    )
    click.echo(f"wrote {kit} and {path}")


@click.group()
def classroom50() -> None:
    """Classroom 50: grading in GitHub Actions of your organisation.

    \b
    An assignment's autograder.py grades the visible checks of the course's candidate kit:
    feedback, since the candidate's code runs in the job that publishes their score. Grade for
    credit with the full course where candidates do not control the machine. See
    docs/classroom50.md.
    """


@classroom50.command("init")
@click.argument("folder", type=FOLDER)
@click.option("--grader-url", required=True, help="Git URL of this grader, installed by pip.")
@click.option("--ref", default=None, help="Branch or tag of the grader to use.")
@click.option("--python", "python_version", default="3.11", show_default=True)
@click.option("--problem", "problems", multiple=True, help="Set only these problems.")
@click.option("--force", is_flag=True, help="Replace an existing autograder.py and kit.")
@course_option
def classroom50_init(folder: Path, course: Path | None, **options: Any) -> None:
    """Write FOLDER/autograder.py, the course's candidate kit beside it and FOLDER/runtime.json
    (FOLDER: <classroom>/autograders/<slug> in your classroom50 repository)."""
    written = api.classroom50_init(folder, course_path=course, **options)
    click.echo(f"wrote {written.autograder}, {written.kit} and {written.runtime}")
    click.echo(f"then: gh teacher assignment add ... --runtime {written.runtime}")


@classroom50.command("run")
@click.argument("checkout", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=FOLDER, required=True, help="Where the results go.")
@click.option("--user", default=None, help="Run the candidate's code as this account.")
@course_option
def classroom50_run(checkout: Path, out_dir: Path, user: str | None, course: Path | None) -> None:
    """Grade CHECKOUT inside Classroom 50's runner (what autograder.py calls): the problem files
    at its top or in one folder of it."""
    report = api.classroom50_run(checkout, out_dir=out_dir, user=user, course_path=course)
    click.echo(f"graded {checkout}: {report.total:g}/{report.max_total:g}")
    if report.grader_fault:
        sys.exit(2)


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
@click.option("--wheelhouse", type=WHEELS, help="Wheels for setup.sh to install offline.")
@course_option
def gradescope_build(out: Path, wheelhouse: Path | None, course: Path | None) -> None:
    """Build the autograder zip to upload to Gradescope: the grader and the full course, hidden
    checks and references included (candidates never see it)."""
    click.echo(f"wrote {api.gradescope_build(out, wheelhouse=wheelhouse, course_path=course)}")


@gradescope.command("wheelhouse")
@click.option("--dest", type=FOLDER, required=True)
@click.option(
    "--python-version",
    default="3.10",
    show_default=True,
    help="The Python of Gradescope's image (3.10 on Ubuntu 22.04, 3.12 on 24.04).",
)
@INDEX
def gradescope_wheelhouse(dest: Path, python_version: str, torch_index_url: str | None) -> None:
    """Download every wheel setup.sh installs (torch CPU, the grader's dependencies, its build
    backend), for installing offline: pass DEST to `build --wheelhouse`, or mount it in the
    container and point GRADER_WHEELHOUSE at it."""
    for wheel in api.download_wheelhouse(
        dest,
        packages=api.gradescope_requirements(),
        python_version=python_version,
        torch_index_url=torch_index_url,
        on_line=indented,
    ):
        click.echo(wheel.name)


@gradescope.command("run")
@click.argument("submission", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--results", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--user", default=None, help="Run the candidate's code as this account.")
@course_option
def gradescope_run(submission: Path, results: Path, user: str | None, course: Path | None) -> None:
    """Grade SUBMISSION inside Gradescope's container (what run_autograder calls): the problem
    files at its top or in one folder of it."""
    report = api.gradescope_run(submission, results=results, user=user, course_path=course)
    click.echo(report.model_dump_json(indent=2))
    if report.grader_fault:
        sys.exit(2)


@click.group()
def sandbox() -> None:
    """Build and maintain the docker sandbox image."""


@sandbox.command()
@click.option("--tag", default=api.DEFAULT_TAG, show_default=True)
@click.option("--base-image", help="Base image (e.g. one made by `sandbox base`).")
@click.option("--wheelhouse", type=WHEELS, help="Install from these wheels only, offline.")
@INDEX
@click.option("--torch-version", default=api.TORCH_VERSION, show_default=True)
@click.option("--quiet", is_flag=True, help="Show only the build's step lines.")
def build(
    tag: str,
    base_image: str | None,
    wheelhouse: Path | None,
    torch_index_url: str | None,
    torch_version: str,
    quiet: bool,
) -> None:
    """Build the sandbox image (online, or air-gapped with --base-image and --wheelhouse)."""
    mode = "air-gapped" if wheelhouse else "online"
    echo_err(f"building {tag} ({mode}, base {base_image or 'default'})")
    start = time.monotonic()
    facts = api.build_image(
        tag,
        base_image=base_image,
        wheelhouse=wheelhouse,
        torch_index_url=torch_index_url,
        torch_version=torch_version,
        on_line=lambda line: (
            None if quiet and not line.startswith(("Step ", "#")) else indented(line)
        ),
    )
    echo_err(f"built {tag} in {time.monotonic() - start:.0f}s")
    for key, value in facts.as_dict().items():
        click.echo(f"{key}: {value}")


@sandbox.command()
@click.option("--name", default=api.DEFAULT_BASE, show_default=True)
@click.option("--suite", default="bookworm", show_default=True)
@click.option("--mirror", help="Debian mirror for debootstrap (default: debootstrap's own).")
@click.option("--cache-dir", type=FOLDER, default=api.CACHE_DIR, show_default=True)
@click.option("--refresh", is_flag=True, help="Re-run debootstrap and re-import.")
def base(name: str, suite: str, mirror: str | None, cache_dir: Path, refresh: bool) -> None:
    """Make an offline base image: debootstrap minbase + python3, then `docker import`."""
    image_id = api.make_base_image(
        name, cache_dir=cache_dir, suite=suite, mirror=mirror, refresh=refresh, on_line=indented
    )
    click.echo(f"{name}: {image_id}")


@sandbox.command()
@click.option("--dest", type=FOLDER, default=api.CACHE_DIR / "wheelhouse", show_default=True)
@click.option("--torch-version", default=api.TORCH_VERSION, show_default=True)
@INDEX
@click.option("--refresh", is_flag=True, help="Download again even if complete.")
def wheelhouse(dest: Path, torch_version: str, torch_index_url: str | None, refresh: bool) -> None:
    """Download the image's wheels (torch, safetensors, numpy and their dependencies)."""
    for wheel in api.download_wheelhouse(
        dest,
        torch_version=torch_version,
        refresh=refresh,
        torch_index_url=torch_index_url,
        on_line=indented,
    ):
        click.echo(wheel.name)


@sandbox.command()
def clean() -> None:
    """Remove every leftover grader container (running or stopped)."""
    click.echo(f"removed {api.clean_containers()} container(s)")
