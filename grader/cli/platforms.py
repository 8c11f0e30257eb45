"""`grader classroom`, `grader classroom50`, `grader gradescope` and `grader sandbox`: the
platforms and the image."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from grader import api
from grader.cli.shared import (
    EXISTING,
    FOLDER,
    Listing,
    course_option,
    echo,
    echo_err,
    example,
    problem_option,
)

option = click.option
URL = "https://github.com/you/attention-grader.git"  # in examples
WHEELS = click.Path(exists=True, file_okay=False, path_type=Path)
INDEX = option("--torch-index-url", help="Extra package index serving torch CPU wheels.")
TORCH = option("--torch-version", default=api.TORCH_VERSION, show_default=True)


def indented(line: str) -> None:
    echo_err(f"  {line}")


@click.group(cls=Listing, epilog=example(f"grader classroom init template-repo --grader-url {URL}"))
def classroom() -> None:
    """GitHub Classroom: a workflow runs the kit's visible checks, as feedback (the candidate owns
    the repository and can fake its output); grade for credit where candidates do not control
    the runner. See docs/classroom.md."""


@classroom.command(
    "init", epilog=example(f"grader classroom init template-repo --grader-url {URL} --ref v1")
)
@click.argument("repo", default=".", type=FOLDER)
@option("--grader-url", required=True, help="Git URL of this grader, cloned by the workflow.")
@option("--ref", help="Branch or tag of the grader to use.")
@option("--python", "python_version", default="3.11", show_default=True)
@option("--force", is_flag=True, help="Replace an existing workflow file and kit.")
@course_option
def classroom_init(repo: Path, course: Path | None, **options: Any) -> None:
    """Write the course's candidate kit into REPO/.grader/kit and .github/workflows/classroom.yml,
    which runs it (REPO: the assignment's template repository)."""
    kit, path = api.classroom_init(repo, course_path=course, **options)
    echo(f"wrote {kit} and {path}")


@click.group(
    cls=Listing,
    epilog=example(f"grader classroom50 init ml-2026/autograders/attention --grader-url {URL}"),
)
def classroom50() -> None:
    """Classroom 50: an assignment's autograder.py runs the kit's visible checks, as feedback
    (the candidate's code runs in the job that publishes the score); grade for credit where
    candidates do not control the machine. See docs/classroom50.md."""


@classroom50.command(
    "init",
    epilog=example(
        "grader classroom50 init ml-2026/autograders/attention "
        f"--grader-url {URL} --ref v1 --problem 1,4"
    ),
)
@click.argument("folder", type=FOLDER)
@option("--grader-url", required=True, help="Git URL of this grader, installed by pip.")
@option("--ref", help="Branch or tag of the grader to use.")
@option("--python", "python_version", default="3.11", show_default=True, help="The runner's.")
@problem_option("Set only these problems.")
@option("--force", is_flag=True, help="Replace an existing autograder.py and kit.")
@course_option
def classroom50_init(folder: Path, course: Path | None, **options: Any) -> None:
    """Write FOLDER/autograder.py, the course's candidate kit beside it and FOLDER/runtime.json
    (FOLDER: <classroom>/autograders/<slug> in your classroom50 repository)."""
    written = api.classroom50_init(folder, course_path=course, **options)
    echo(f"wrote {written.autograder}, {written.kit} and {written.runtime}")
    echo(f"then: gh teacher assignment add ... --runtime {written.runtime}")


@classroom50.command(
    "run", epilog=example("grader classroom50 run checkout --course kit --out results")
)
@click.argument("checkout", type=EXISTING)
@option("--out", "out_dir", type=FOLDER, required=True, help="Where the results go.")
@option("--user", help="Run the candidate's code as this account.")
@course_option
def classroom50_run(checkout: Path, course: Path | None, **options: Any) -> None:
    """Grade CHECKOUT inside Classroom 50's runner (what autograder.py calls): the problem files
    at its top or in one folder of it."""
    report = api.classroom50_run(checkout, course_path=course, on_fault=echo_err, **options)
    echo(f"graded {checkout}: {api.total_text(report)}")
    sys.exit(2 if report.grader_fault else 0)


@click.group(
    cls=Listing, epilog=example("grader gradescope build --course my-course --out autograder.zip")
)
def gradescope() -> None:
    """Gradescope: run_autograder starts the grader as root, which runs the candidate's code as
    the unprivileged `grader-student` (limits set first), who can read neither the problems nor
    the references, nor write the results. See docs/gradescope.md."""


@gradescope.command(
    "build", epilog=example("grader gradescope build --course my-course --out autograder.zip")
)
@option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("autograder.zip"),
        show_default=True)  # fmt: skip
@option("--wheelhouse", type=WHEELS, help="Wheels for setup.sh to install offline.")
@course_option
def gradescope_build(out: Path, wheelhouse: Path | None, course: Path | None) -> None:
    """Build the autograder zip to upload to Gradescope: the grader and the full course, hidden
    checks and references included (candidates never see it)."""
    echo(f"wrote {api.gradescope_build(out, wheelhouse=wheelhouse, course_path=course)}")


@gradescope.command(
    "wheelhouse", epilog=example("grader gradescope wheelhouse --dest wheels --python-version 3.10")
)
@option("--dest", type=FOLDER, required=True)
@option("--python-version", default="3.10", show_default=True,
        help="The Python of Gradescope's image (3.10 on Ubuntu 22.04, 3.12 on 24.04).")  # fmt: skip
@INDEX
def gradescope_wheelhouse(dest: Path, **options: Any) -> None:
    """Download every wheel setup.sh installs (torch CPU, the grader's dependencies, its build
    backend), for installing offline: pass DEST to `build --wheelhouse`, or mount it in the
    container and point GRADER_WHEELHOUSE at it."""
    packages = api.gradescope_requirements()
    for wheel in api.download_wheelhouse(dest, packages=packages, on_line=indented, **options):
        echo(wheel.name)


@gradescope.command(
    "run",
    epilog=example(
        "grader gradescope run /autograder/submission --user grader-student "
        "--results /autograder/results/results.json"
    ),
)
@click.argument("submission", type=EXISTING)
@option("--results", type=click.Path(dir_okay=False, path_type=Path), required=True)
@option("--user", help="Run the candidate's code as this account.")
@course_option
def gradescope_run(submission: Path, course: Path | None, **options: Any) -> None:
    """Grade SUBMISSION inside Gradescope's container (what run_autograder calls): the problem
    files at its top or in one folder of it."""
    report = api.gradescope_run(submission, course_path=course, **options)
    echo(api.gradescope_summary(report, options["results"]))
    if report.grader_fault:
        echo_err(
            "grader error: no results.json: Gradescope shows that the autograder failed and "
            "records no score; regrade once the summary above says what failed"
        )
        sys.exit(2)


@click.group(
    cls=Listing,
    epilog=example("grader sandbox build --torch-index-url https://download.pytorch.org/whl/cpu"),
)
def sandbox() -> None:
    """Build and maintain the docker sandbox image."""


@sandbox.command(
    epilog=example("grader sandbox build --torch-index-url https://download.pytorch.org/whl/cpu")
)
@option("--tag", default=api.DEFAULT_TAG, show_default=True)
@option("--base-image", help="Base image (e.g. one made by `sandbox base`).")
@option("--wheelhouse", type=WHEELS, help="Install from these wheels only, offline.")
@INDEX
@TORCH
@option("--quiet", is_flag=True, help="Show only the build's step lines.")
def build(tag: str, quiet: bool, **options: Any) -> None:
    """Build the sandbox image (online, or air-gapped with --base-image and --wheelhouse)."""
    steps = ("Step ", "#")
    shown = lambda line: None if quiet and not line.startswith(steps) else indented(line)  # noqa: E731
    for key, value in api.build_image(tag, on_line=shown, on_note=echo_err, **options).items():
        echo(f"{key}: {value}")


@sandbox.command(epilog=example("grader sandbox base --suite bookworm"))
@option("--name", default=api.DEFAULT_BASE, show_default=True)
@option("--suite", default="bookworm", show_default=True)
@option("--mirror", help="Debian mirror for debootstrap (default: debootstrap's own).")
@option("--cache-dir", type=FOLDER, default=api.CACHE_DIR, show_default=True)
@option("--refresh", is_flag=True, help="Re-run debootstrap and re-import.")
def base(name: str, **options: Any) -> None:
    """Make an offline base image: debootstrap minbase + python3, then `docker import`."""
    echo(f"{name}: {api.make_base_image(name, on_line=indented, **options)}")


@sandbox.command(epilog=example("grader sandbox wheelhouse"))
@option("--dest", type=FOLDER, default=api.CACHE_DIR / "wheelhouse", show_default=True)
@TORCH
@INDEX
@option("--refresh", is_flag=True, help="Download again even if complete.")
def wheelhouse(dest: Path, **options: Any) -> None:
    """Download the image's wheels (torch, safetensors, numpy and their dependencies)."""
    for wheel in api.download_wheelhouse(dest, on_line=indented, **options):
        echo(wheel.name)


@sandbox.command(epilog=example("grader sandbox clean"))
def clean() -> None:
    """Remove every leftover grader container (running or stopped)."""
    echo(f"removed {api.clean_containers()} container(s)")
