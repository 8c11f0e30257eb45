"""Tables and progress for the terminal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from grader.report import ProblemStatus, SubmissionReport

SHORT = {
    ProblemStatus.graded: "",
    ProblemStatus.not_attempted: "-",
    ProblemStatus.import_error: "import error",
    ProblemStatus.timeout: "timeout",
    ProblemStatus.crashed: "crashed",
    ProblemStatus.forbidden_api: "forbidden",
    ProblemStatus.grader_error: "GRADER ERROR",
}


def score_table(reports: list[SubmissionReport]) -> Table:
    """One row per submission, one column per problem."""
    table = Table(title="Scores", show_lines=False)
    table.add_column("submission", style="bold")
    problems = [p.problem for p in reports[0].problems] if reports else []
    for problem in problems:
        table.add_column(problem, justify="right")
    table.add_column("total", justify="right", style="bold")
    for report in reports:
        cells = []
        for p in report.problems:
            note = SHORT[p.status]
            if p.status is ProblemStatus.not_attempted:
                cells.append("[dim]-[/dim]")
            else:
                suffix = f" [red]{note}[/red]" if note else ""
                cells.append(f"{p.score:g}/{p.max_score:g}{suffix}")
        table.add_row(report.submission, *cells, f"{report.total:g}/{report.max_total:g}")
    return table


def print_scores(reports: list[SubmissionReport], console: Console | None = None) -> None:
    (console or Console()).print(score_table(reports))
