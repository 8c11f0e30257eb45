"""Grading inside Gradescope's container: find the problem files in the upload, grade them as
the unprivileged account, write `results.json`.

`run_autograder` starts the grader as root; the grader runs the candidate's code (the worker)
as `grader-student`, its rlimits set before the worker starts (the local backend's
`launch.py`). That account cannot read the problems (hidden checks) or the reference
solutions (root-only since `setup.sh`), nor write the results: the grader writes
`results.json` after the worker ended, and kills whatever the account left running. It can
still read the inputs of its own run, and whatever else the image leaves world-readable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.platforms.gradescope.results import gradescope_results
from grader.reports.models import SubmissionReport
from grader.sandboxing.backends.local import LocalBackend
from grader.sandboxing.notebooks import holds_notebook
from grader.verdict.plan import draw_seed

IGNORED = {"__MACOSX"}  # what macOS's zip adds beside the real folder
SHOWN = 10  # names of the upload's content listed when no problem file is found


@dataclass(frozen=True)
class Located:
    folder: Path | None  # where the problem files are; None when nowhere
    note: str  # what the candidate is told about it; empty when they are at the top


def holds_problems(folder: Path, entries: set[str]) -> bool:
    """Whether `folder` holds a problem file or a notebook (staging finds them in it)."""
    if any((folder / entry).is_file() for entry in entries):
        return True
    return holds_notebook(folder)


def locate(upload: Path, entries: set[str]) -> Located:
    """The problem files at the top of the upload, or in the one folder of it that holds some."""
    if holds_problems(upload, entries):
        return Located(upload, "")
    folders = [
        d
        for d in sorted(upload.iterdir())
        if d.is_dir()
        and not d.is_symlink()
        and not d.name.startswith(".")
        and d.name not in IGNORED
        and holds_problems(d, entries)
    ]
    if len(folders) == 1:
        return Located(folders[0], f"graded the problem files in the folder {folders[0].name}/")
    example = ", ".join(sorted(entries)[:2])
    if folders:
        names = ", ".join(f"{d.name}/" for d in folders)
        return Located(
            None, f"problem files in several folders ({names}): upload one set ({example}, ...)"
        )
    content = sorted(p.name + "/" * p.is_dir() for p in upload.iterdir())
    listing = ", ".join(content[:SHOWN]) + (", ..." if len(content) > SHOWN else "")
    return Located(
        None,
        f"no problem file found: expected files named after the problems ({example}, ...) at "
        f"the top of the upload or in one folder; it holds: {listing or 'nothing'}",
    )


def run_gradescope(
    upload: Path, results: Path, user: str | None, catalog: Catalog
) -> SubmissionReport:
    """Grade Gradescope's submission folder on the course's problems and write `results.json`;
    return the full report."""
    located = locate(upload, {p.spec.entry for p in catalog.problems.values()})
    problems = list(catalog.problems.values())
    with Grader(catalog, problems, LocalBackend(user), draw_seed(None)) as grader:
        report = grader.grade(located.folder or upload, name="submission")
    if located.note:
        message = "; ".join(m for m in (report.message, located.note) if m)
        report = report.model_copy(update={"message": message})
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(gradescope_results(report), indent=2) + "\n", encoding="utf-8")
    return report
