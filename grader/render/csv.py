"""The gradebook CSV: one row per submission, one score column per problem, total, status."""

from __future__ import annotations

import csv
from pathlib import Path

from grader.render.safe import csv_cell
from grader.render.stats import problem_ids
from grader.report import ProblemStatus, SubmissionReport


def submission_status(report: SubmissionReport) -> str:
    """`grader_error` (regrade), `not_attempted` (nothing handed in) or `ok`."""
    if report.grader_fault:
        return "grader_error"
    if all(p.status is ProblemStatus.not_attempted for p in report.problems):
        return "not_attempted"
    return "ok"


def write_summary_csv(reports: list[SubmissionReport], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    problems = problem_ids(reports)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["submission", *problems, "total", "max_total", "status", "notes"])
        for report in reports:
            scores = {p.problem: p for p in report.problems}
            notes = [
                f"{p.problem}: {p.status.value}"
                for p in report.problems
                if p.status not in (ProblemStatus.graded, ProblemStatus.not_attempted)
            ]
            writer.writerow(
                [
                    csv_cell(report.submission),
                    *(f"{scores[p].score:g}" if p in scores else "" for p in problems),
                    f"{report.total:g}",
                    f"{report.max_total:g}",
                    submission_status(report),
                    csv_cell("; ".join(notes)),
                ]
            )
