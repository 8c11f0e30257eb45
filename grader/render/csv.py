"""The gradebook CSV: one row per submission, one score column per problem."""

from __future__ import annotations

import csv
from pathlib import Path

from grader.report import ProblemStatus, SubmissionReport


def write_summary_csv(reports: list[SubmissionReport], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    problems = [p.problem for p in reports[0].problems] if reports else []
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["submission", *problems, "total", "max_total", "status"])
        for report in reports:
            faults = [p.problem for p in report.problems if p.status is ProblemStatus.grader_error]
            status = "grader_error" if faults else "ok"
            writer.writerow([report.submission, *(f"{p.score:g}" for p in report.problems),
                             f"{report.total:g}", f"{report.max_total:g}", status])
