"""Resuming a batch: a saved report is reused when nothing that decides the grade changed."""

from __future__ import annotations

from pathlib import Path

from grader import __version__
from grader.report import SubmissionReport, read_report
from grader.staging import content_hash


def saved_report(submission: Path, out_dir: Path, problems: list[str]) -> SubmissionReport | None:
    """The report saved for `submission` if it is still valid: same grader version, same
    content hash, same problems and no grader error."""
    path = out_dir / f"{submission.resolve().name}.json"
    try:
        report = read_report(path)
    except (OSError, ValueError):
        return None
    if (
        report.run.grader_version == __version__
        and report.content_hash == content_hash(submission)
        and [p.problem for p in report.problems] == problems
        and not report.grader_fault
    ):
        return report
    return None
