"""Grading inside Gradescope's container: find the problem files in the upload, grade them as
the unprivileged account, write `results.json`.

`run_autograder` starts the grader as root; the grader runs the candidate's code (the worker)
as `grader-student`, its rlimits set before the worker starts (the local backend's
`launch.py`). That account cannot read the problems (hidden checks) or the reference
solutions (root-only since `setup.sh`), nor write the results: the grader writes
`results.json` after the worker ended, and kills whatever the account left running. It can
still read the inputs of its own run, and whatever else the image leaves world-readable.
After a grader fault no `results.json` is left: Gradescope then shows that the autograder
failed, never a score (`gradescope_results`).
"""

from __future__ import annotations

import json
from pathlib import Path

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.platforms.gradescope.results import gradescope_results
from grader.reports.models import SubmissionReport
from grader.sandboxing.backends.local import LocalBackend
from grader.verdict.plan import draw_seed

REPORT_FILE = "report.json"
"""The full report, beside results.json: Gradescope keeps only results.json and the output."""


def run_gradescope(
    upload: Path, results: Path, user: str | None, catalog: Catalog
) -> SubmissionReport:
    """Grade Gradescope's submission folder on the course's problems and write `results.json`
    (none after a grader fault) and the full report beside it (`REPORT_FILE`); return it."""
    problems = list(catalog.problems.values())
    with Grader(catalog, problems, LocalBackend(user), draw_seed(None)) as grader:
        report = grader.grade(upload, name="submission")
    results.parent.mkdir(parents=True, exist_ok=True)
    results.unlink(missing_ok=True)
    report_path(results).write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    written = gradescope_results(report)
    if written is not None:
        results.write_text(json.dumps(written, indent=2) + "\n", encoding="utf-8")
    return report


def report_path(results: Path) -> Path:
    """Where the full report of a run that writes `results` goes."""
    return results.with_name(REPORT_FILE)
