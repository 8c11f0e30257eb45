"""Gradescope: the autograder zip, and the run inside Gradescope's container.

`run_autograder` runs as root and starts the grader as root; the grader runs the candidate's
code (the worker) as the unprivileged `grader-student` account through `setpriv`. That account
cannot read the problems (hidden checks) or the reference solutions (root-only since
`setup.sh`), nor write the results: the grader writes `results.json` after the worker ended.
It can still read the inputs of its own run, and whatever else the image leaves world-readable.
"""

from __future__ import annotations

import json
import secrets
import stat
import zipfile
from pathlib import Path

from grader.backends.local import LocalBackend
from grader.catalog import Catalog
from grader.grade import Grader
from grader.paths import ROOT
from grader.render.gradescope import gradescope_results
from grader.report import SubmissionReport

STUDENT = "grader-student"
SOURCE = "/autograder/source/grader"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
PACKED = ("pyproject.toml", "README.md", "grader", "problems", "reference_solutions", "sandbox")
SKIPPED = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}

SETUP = f"""\
#!/usr/bin/env bash
# Runs once, as root, while Gradescope builds the autograder image.
set -euo pipefail
apt-get update -q
apt-get install -y -q python3 python3-venv python3-pip
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11) and "the grader needs Python 3.11+: \
choose a newer base image (Ubuntu 24.04)")'
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install --quiet torch --index-url {TORCH_INDEX}
/autograder/venv/bin/pip install --quiet -e {SOURCE}
# The unprivileged account the candidate's code runs as.
id -u {STUDENT} >/dev/null 2>&1 || useradd --system --user-group --no-create-home \\
    --shell /usr/sbin/nologin {STUDENT}
# Only root reads the problems (hidden checks) and the reference solutions; the worker script
# and the grader package stay readable.
chmod -R go-rwx {SOURCE}/problems {SOURCE}/reference_solutions
chmod -R go+rX {SOURCE}/sandbox {SOURCE}/grader /autograder/venv
chmod go+x /autograder /autograder/source {SOURCE}
"""

RUN = f"""\
#!/usr/bin/env bash
# Runs as root for every submission: the grader stays root, the candidate's code runs as
# {STUDENT} (see `grader gradescope --help`). The full report goes to stdout (instructors only).
set -uo pipefail
chmod 700 /autograder/results
cd {SOURCE}
/autograder/venv/bin/grader gradescope run /autograder/submission \\
    --results /autograder/results/results.json --user {STUDENT}
status=$?
pkill -KILL -u {STUDENT} || true
exit $status
"""


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


def add(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def build_autograder(out: Path, root: Path = ROOT) -> Path:
    """Write the autograder zip: `setup.sh` and `run_autograder` at its root, the grader (code,
    problems, reference solutions, worker) under `grader/`. Same sources, same bytes."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w") as archive:
        add(archive, "setup.sh", SETUP.encode(), executable=True)
        add(archive, "run_autograder", RUN.encode(), executable=True)
        for relative in packed_files(root):
            add(archive, f"grader/{relative.as_posix()}", (root / relative).read_bytes())
    return out


def run_gradescope(submission: Path, results: Path, user: str | None) -> SubmissionReport:
    """Grade Gradescope's submission folder and write `results.json`."""
    catalog = Catalog()
    grader = Grader(
        catalog, list(catalog.problems.values()), LocalBackend(user), secrets.randbelow(2**31)
    )
    try:
        report = grader.grade(submission, name="submission")
    finally:
        grader.close()
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(gradescope_results(report), indent=2) + "\n", encoding="utf-8")
    return report
