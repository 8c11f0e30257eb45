"""Gradescope's autograder zip: `setup.sh`, `run_autograder`, the grader, the course,
optionally wheels.

The grader is packed from the package as it is installed (a checkout or a wheel) in a
checkout's layout (its code, the sandbox and, where it is installed, the built-in course's
`course.toml`, `problems/` and `reference_solutions/`), with a `pyproject.toml` of its own; a
course other than the built-in one goes under `course/`.
`setup.sh` builds the image (a virtualenv, the `grader-student` account, the problems and the
reference solutions made root-only); `run_autograder` grades one upload (`gradescope run`).
The zip holds hidden checks and references: it goes to Gradescope, never to candidates.
"""

from __future__ import annotations

import json
import shutil
import stat
import zipfile
from importlib.metadata import requires
from pathlib import Path

from grader import __version__
from grader.sandboxing.defaults import TORCH_VERSION
from grader.specs.paths import installed_course, package_path

STUDENT = "grader-student"
SOURCE = "/autograder/source/grader"
WHEELHOUSE = "/autograder/source/wheelhouse"
COURSE = "/autograder/source/course"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
BUILD_BACKEND = "setuptools>=68"
SKIPPED = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
COURSE_PARTS = ("course.toml", "problems", "reference_solutions")

SETUP = f"""\
#!/usr/bin/env bash
# Runs once, as root, while Gradescope builds the autograder image: a virtualenv with torch
# {TORCH_VERSION} (CPU) and the grader, and the account the candidate's code runs as. Needs
# Python 3.10+ (Ubuntu 22.04 or newer). Offline from the wheels in $GRADER_WHEELHOUSE (by
# default the zip's wheelhouse/) when there are any; otherwise online, torch from PyTorch's
# CPU index and the rest from PyPI.
set -euo pipefail
VENV=/autograder/venv
WHEELHOUSE=${{GRADER_WHEELHOUSE:-{WHEELHOUSE}}}
if ! python3 -m venv "$VENV" 2>/dev/null; then
    rm -rf "$VENV"
    apt-get update -q
    apt-get install -y -q python3 python3-venv
    python3 -m venv "$VENV"
fi
"$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 10) and \\
"the grader needs Python 3.10+: choose a newer base image (Ubuntu 22.04 or later)")'
pip=("$VENV/bin/pip" install --quiet --disable-pip-version-check)
if compgen -G "$WHEELHOUSE/*.whl" >/dev/null; then
    pip+=(--no-index --find-links "$WHEELHOUSE")
    "${{pip[@]}}" torch=={TORCH_VERSION}
else
    "${{pip[@]}}" torch=={TORCH_VERSION} --index-url {TORCH_INDEX}
fi
"${{pip[@]}}" --editable {SOURCE}
# The unprivileged account the candidate's code runs as.
id -u {STUDENT} >/dev/null 2>&1 || useradd --system --user-group --no-create-home \\
    --shell /usr/sbin/nologin {STUDENT}
# Only root reads the problems (hidden checks) and the reference solutions; the worker (the
# sandbox package), the grader package and the virtualenv stay readable.
chmod -R go+rX {SOURCE}/grader {SOURCE}/sandbox "$VENV"
for hidden in {SOURCE}/problems {SOURCE}/reference_solutions {COURSE}; do
    if [ -d "$hidden" ]; then chmod -R go-rwx "$hidden"; fi
done
chmod go+x /autograder /autograder/source {SOURCE}
"""

RUN = f"""\
#!/usr/bin/env bash
# Runs as root for every submission: the grader stays root, the candidate's code runs as
# {STUDENT}, and every process of that account is killed after it (docs/gradescope.md).
# A summary goes to stdout, which Gradescope shows to instructors only; the full report to
# /autograder/results/report.json.
set -euo pipefail
mkdir -p /autograder/results
chmod 700 /autograder/results
cd {SOURCE}
course=()
if [ -d {COURSE} ]; then course=(--course {COURSE}); fi
exec /autograder/venv/bin/grader gradescope run /autograder/submission "${{course[@]}}" \\
    --results /autograder/results/results.json --user {STUDENT}
"""


def dependencies() -> list[str]:
    """The grader's own dependencies as installed, without the development extra."""
    return [d for d in requires("attention-grader") or [] if "extra ==" not in d]


def requirements() -> list[str]:
    """What `setup.sh` installs: torch, the grader's dependencies whatever their markers and its
    build backend (for the editable install)."""
    unmarked = [d.split(";")[0].strip() for d in dependencies()]  # a wheelhouse may serve 3.10
    return [f"torch=={TORCH_VERSION}", *unmarked, BUILD_BACKEND]


def pyproject() -> str:
    """A `pyproject.toml` for the packed grader, packed from a checkout or from a wheel."""
    listed = ", ".join(json.dumps(d) for d in dependencies())
    return f"""\
[build-system]
requires = [{json.dumps(BUILD_BACKEND)}]
build-backend = "setuptools.build_meta"

[project]
name = "attention-grader"
version = {json.dumps(__version__)}
requires-python = ">=3.10"
dependencies = [{listed}]

[project.scripts]
grader = "grader.cli.main:cli"

[tool.setuptools.packages.find]
include = ["grader*", "sandbox*"]

[tool.setuptools.package-data]
"sandbox" = ["Dockerfile"]
"""


def packed_files(root: Path) -> list[Path]:
    """The files under `root` the zip carries, relative to it (no caches, no bytecode)."""
    return sorted(
        p.relative_to(root)
        for p in root.rglob("*")
        if p.is_file()
        and not SKIPPED.intersection(p.relative_to(root).parts)
        and p.suffix != ".pyc"
    )


def entry(name: str, executable: bool = False, compressed: bool = True) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    info.compress_type = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    return info


def build_autograder(out: Path, course: Path | None = None, wheelhouse: Path | None = None) -> Path:
    """Write the autograder zip: `setup.sh` and `run_autograder` at its root, the grader (code,
    sandbox, and the built-in problems and references where installed) under `grader/`, the
    course folder `course` (if not the built-in one) under `course/`, and the wheels of
    `wheelhouse` under `wheelhouse/` (then `setup.sh` installs offline). Same sources, same
    bytes."""
    packages = {name: package_path(name) for name in ("grader", "sandbox")}
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(entry("setup.sh", executable=True), SETUP.encode())
        archive.writestr(entry("run_autograder", executable=True), RUN.encode())
        archive.writestr(entry("grader/pyproject.toml"), pyproject().encode())
        for package, folder in packages.items():
            for relative in packed_files(folder):
                name = f"grader/{package}/{relative.as_posix()}"
                archive.writestr(entry(name), (folder / relative).read_bytes())
        builtin = installed_course()
        for found in [builtin / part for part in COURSE_PARTS] if builtin is not None else []:
            for relative in [Path()] if found.is_file() else packed_files(found):
                name = f"grader/{Path(found.name, relative).as_posix()}"
                archive.writestr(entry(name), (found / relative).read_bytes())
        if course is not None:
            for relative in packed_files(course):
                name = f"course/{relative.as_posix()}"
                archive.writestr(entry(name), (course / relative).read_bytes())
        for wheel in sorted(wheelhouse.glob("*.whl")) if wheelhouse is not None else ():
            with (
                wheel.open("rb") as src,
                archive.open(entry(f"wheelhouse/{wheel.name}", compressed=False), "w") as dst,
            ):
                shutil.copyfileobj(src, dst)
    return out
