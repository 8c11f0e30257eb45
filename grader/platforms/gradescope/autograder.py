"""Gradescope's autograder zip: `setup.sh`, `run_autograder`, the grader, optionally wheels.

`setup.sh` builds the image (a virtualenv, the `grader-student` account, the problems and the
reference solutions made root-only); `run_autograder` grades one upload (`gradescope_run.py`).
"""

from __future__ import annotations

import shutil
import stat
import zipfile
from pathlib import Path

from grader.compat import tomllib
from grader.courses.paths import ROOT
from grader.sandbox.image import TORCH_VERSION

STUDENT = "grader-student"
SOURCE = "/autograder/source/grader"
WHEELHOUSE = "/autograder/source/wheelhouse"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
PACKED = ("pyproject.toml", "README.md", "grader")
SKIPPED = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}

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
# Only root reads the problems (hidden checks) and the reference solutions; the worker script,
# the grader package and the virtualenv stay readable.
chmod -R go+rX {SOURCE}/grader "$VENV"
chmod -R go-rwx {SOURCE}/grader/courses/attention
chmod go+x /autograder /autograder/source {SOURCE}
"""

RUN = f"""\
#!/usr/bin/env bash
# Runs as root for every submission: the grader stays root, the candidate's code runs as
# {STUDENT}, and every process of that account is killed after it (docs/gradescope.md).
# The full report goes to stdout, which Gradescope shows to instructors only.
set -euo pipefail
mkdir -p /autograder/results
chmod 700 /autograder/results
cd {SOURCE}
exec /autograder/venv/bin/grader gradescope run /autograder/submission \\
    --results /autograder/results/results.json --user {STUDENT}
"""


def requirements(root: Path = ROOT) -> list[str]:
    """What `setup.sh` installs: torch, the grader's dependencies whatever their markers (a
    wheelhouse may serve another Python) and its build backend (for the editable install)."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    dependencies = [d.split(";")[0].strip() for d in project["project"]["dependencies"]]
    return [f"torch=={TORCH_VERSION}", *dependencies, *project["build-system"]["requires"]]


def packed_files(root: Path) -> list[Path]:
    """The grader's files the zip carries, relative to `root`."""
    files = []
    for name in PACKED:
        top = root / name
        if top.is_file():
            files.append(Path(name))
        elif top.is_dir():
            files += sorted(
                p.relative_to(root)
                for p in top.rglob("*")
                if p.is_file()
                and not SKIPPED.intersection(p.relative_to(root).parts)
                and p.suffix != ".pyc"
            )
    return files


def entry(name: str, executable: bool = False, compressed: bool = True) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    info.compress_type = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    return info


def build_autograder(out: Path, root: Path = ROOT, wheelhouse: Path | None = None) -> Path:
    """Write the autograder zip: `setup.sh` and `run_autograder` at its root, the grader (code,
    problems, reference solutions, worker) under `grader/`, and the wheels of `wheelhouse`
    under `wheelhouse/` (then `setup.sh` installs offline). Same sources, same bytes."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(entry("setup.sh", executable=True), SETUP.encode())
        archive.writestr(entry("run_autograder", executable=True), RUN.encode())
        for relative in packed_files(root):
            archive.writestr(entry(f"grader/{relative.as_posix()}"), (root / relative).read_bytes())
        for wheel in sorted(wheelhouse.glob("*.whl")) if wheelhouse is not None else ():
            with (
                wheel.open("rb") as src,
                archive.open(entry(f"wheelhouse/{wheel.name}", compressed=False), "w") as dst,
            ):
                shutil.copyfileobj(src, dst)
    return out
