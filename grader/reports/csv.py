"""The gradebook CSV: a points-possible row, then one row per submission with the student, one
score column per problem, total, status and notes."""

from __future__ import annotations

import csv
from pathlib import Path

from grader.reports.models import ProblemStatus, SubmissionReport
from grader.reports.safe import csv_cell
from grader.reports.stats import problem_ids
from grader.reports.text import absence_notes, fixable, num

POINTS_POSSIBLE = "points possible"
TAIL = ("total", "max_total", "status", "notes")


def submission_status(report: SubmissionReport) -> str:
    """`grader_error` (regrade), `fixable` (a problem not attempted where something like its
    file was found: the notes say what), `not_attempted` (nothing handed in) or `ok`."""
    if report.grader_fault:
        return "grader_error"
    if any(fixable(p) for p in report.problems):
        return "fixable"
    if all(p.status is ProblemStatus.not_attempted for p in report.problems):
        return "not_attempted"
    return "ok"


def points_possible(reports: list[SubmissionReport], problems: list[str]) -> list[str]:
    """Each problem's maximum and the total maximum, in the score columns."""
    maxima = {p.problem: p.max_score for r in reports for p in r.problems}
    total = num(sum(maxima[p] for p in problems))
    return [POINTS_POSSIBLE, "", "", *(num(maxima[p]) for p in problems), total, total, "", ""]


def write_summary_csv(reports: list[SubmissionReport], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    problems = problem_ids(reports)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["submission", "student_id", "student_name", *problems, *TAIL])
        writer.writerow(points_possible(reports, problems))
        for report in reports:
            scores = {p.problem: p for p in report.problems}
            notes = [
                f"{p.problem}: {p.status.value}"
                for p in report.problems
                if p.status not in (ProblemStatus.graded, ProblemStatus.not_attempted)
            ] + absence_notes(report.problems)
            who = report.student
            writer.writerow(
                [
                    csv_cell(report.submission),
                    csv_cell(who.id if who else ""),
                    csv_cell(who.name if who else ""),
                    *(num(scores[p].score) if p in scores else "" for p in problems),
                    num(report.total),
                    num(report.max_total),
                    submission_status(report),
                    csv_cell("; ".join(notes)),
                ]
            )
