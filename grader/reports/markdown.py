"""Markdown: the instructor's class summary, and one candidate's feedback (from their view)."""

from __future__ import annotations

from grader.reports.csv import submission_status
from grader.reports.models import CheckReport, ProblemReport, ProblemStatus, SubmissionReport
from grader.reports.redact import WITHHELD, withheld_points
from grader.reports.safe import markdown
from grader.reports.stats import BUCKETS, class_stats, problem_ids
from grader.reports.text import (
    FIXABLE,
    absence_notes,
    details_once,
    fixable,
    fraction,
    num,
    problem_note,
    scored,
)


def cell(text: str) -> str:
    """Literal text inside a Markdown table cell."""
    return markdown(text)


def table(header: list[str], rows: list[list[str]], align: str = "") -> list[str]:
    spec = align or "-" * len(header)
    rule = ["---:" if a == "r" else "---" for a in spec]
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def class_summary(reports: list[SubmissionReport]) -> str:
    """The instructor's summary: score distribution per problem and the most common mistakes."""
    stats = class_stats(reports)
    lines = [
        "# Class report",
        "",
        f"{stats.submissions} submission(s); total out of {num(stats.max_total)}: "
        f"mean {num(stats.mean_total)}, median {num(stats.median_total)}.",
    ]
    if stats.grader_errors:
        lines.append(f"**{stats.grader_errors} submission(s) hit a grader error**: regrade them.")
    lines += ["", "## Scores per problem", ""]
    lines += table(
        ["problem", "max", "attempted", "mean", "median", *BUCKETS],
        [
            [
                p.problem,
                num(p.max_score),
                str(p.attempted),
                num(p.mean),
                num(p.median),
                *(str(p.histogram[b]) for b in BUCKETS),
            ]
            for p in stats.problems
        ],
        "-rrrr" + "r" * len(BUCKETS),
    )
    lines += ["", "## Most common mistakes", ""]
    if stats.mistakes:
        lines += table(
            ["problem", "mistake", "submissions", "description"],
            [[m.problem, m.mistake, str(m.submissions), m.description] for m in stats.mistakes],
            "--r-",
        )
    else:
        lines.append("No named mistake was seen.")
    problems = problem_ids(reports)
    lines += ["", "## Submissions", ""]
    rows = []
    for report in reports:
        scores = {p.problem: p for p in report.problems}
        rows.append(
            [
                report.submission,
                *(score_cell(scores[p]) if p in scores else "" for p in problems),
                fraction(report.total, report.max_total),
                submission_status(report).replace("_", " "),
            ]
        )
    lines += table(
        ["submission", *problems, "total", "status"], rows, "-" + "r" * (len(problems) + 1) + "-"
    )
    found = [(r.submission, note) for r in reports for note in absence_notes(r.problems)]
    if found:
        lines += ["", f"## Zeros to look at (`-{FIXABLE}`)", ""]
        lines += ["Not attempted, but something like the problem's file was found:", ""]
        lines += table(["submission", "what was found"], [list(row) for row in found], "--")
    return "\n".join(lines) + "\n"


def score_cell(problem: ProblemReport) -> str:
    if fixable(problem):
        return f"-{FIXABLE}"
    if problem.status is ProblemStatus.not_attempted:
        return "-"
    note = "" if problem.status is ProblemStatus.graded else f" ({problem.status.value})"
    return num(problem.score) + note


def feedback_row(problem: ProblemReport, check: CheckReport, details: list[str]) -> list[str]:
    """A check's row of the candidate's feedback: mark, name, points, details."""
    return [
        check.status.mark,
        check.name,
        fraction(scored(problem, check), check.max_points),
        "\n".join(details),
    ]


def candidate_feedback(view: SubmissionReport) -> str:
    """One candidate's feedback, rendered from their (redacted) view of the report."""
    lines = [f"# {markdown(view.submission)}: {fraction(view.total, view.max_total)}", ""]
    if view.message:
        lines += [f"> {markdown(view.message)}", ""]
    skipped = [p for p in view.problems if p.status is ProblemStatus.not_attempted]
    for problem in view.problems:
        if problem in skipped:
            continue
        score = fraction(problem.score, problem.max_score)
        lines += [f"## {markdown(problem.problem)}: {score}", ""]
        if problem.title:
            lines += [f"*{markdown(problem.title)}*", ""]
        note = problem_note(problem)
        if note:
            lines += [f"**{markdown(note)}**", ""]
        shown = [c for c in problem.checks if c.check != WITHHELD]
        if shown:
            lines += table(
                ["", "check", "points", "details"],
                [
                    feedback_row(problem, c, d)
                    for c, d in zip(shown, details_once(problem, shown), strict=True)
                ],
                "--r-",
            )
            lines.append("")
        count, worth = withheld_points(problem)
        if count:
            hidden = [c for c in problem.checks if c.check == WITHHELD]
            points = sum(scored(problem, c) for c in hidden)
            lines += [
                f"{count} hidden check(s) worth {num(worth)} point(s): {num(points)} scored.",
                "",
            ]
    if skipped:
        missed = num(sum(p.max_score for p in skipped))
        lines.append(
            f"Not attempted ({missed} points): "
            + ", ".join(f"`{p.problem}`" for p in skipped)
            + "."
        )
        lines += ["", *(f"- {markdown(note)}" for note in absence_notes(skipped))]
    return "\n".join(lines).rstrip() + "\n"
