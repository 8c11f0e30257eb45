"""The terminal: score tables, the progress bar, a candidate's feedback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from grader.render.text import check_details, fraction, num, problem_note
from grader.report import CheckStatus, ProblemStatus, SubmissionReport
from grader.validate import Outcome

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
    """One row per submission, one column per problem someone attempted."""
    table = Table(title="Scores", show_lines=False)
    table.add_column("submission", style="bold")
    attempted = {
        p.problem
        for r in reports
        for p in r.problems
        if p.status is not ProblemStatus.not_attempted
    }
    problems = [p.problem for p in reports[0].problems if p.problem in attempted] if reports else []
    for problem in problems:
        table.add_column(problem, justify="right")
    table.add_column("total", justify="right", style="bold")
    for report in reports:
        cells = []
        for p in report.problems:
            if p.problem not in attempted:
                continue
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


def print_outcomes(outcomes: list[Outcome], console: Console | None = None) -> None:
    """The validation table: one row per reference, starter and mutant."""
    table = Table(title="Validation")
    for column in ("problem", "kind", "name", "result", "detail"):
        table.add_column(column)
    for o in outcomes:
        result = "[green]ok[/green]" if o.ok else "[red]MISS[/red]"
        table.add_row(o.problem, o.kind, o.name, result, o.detail)
    (console or Console()).print(table)


@contextmanager
def progress(total: int, console: Console | None = None) -> Iterator[Callable[[str], None]]:
    """A progress bar with an ETA on stderr; advance it with the name of each finished item.
    Quiet when stderr is not a terminal."""
    console = console or Console(stderr=True)
    if not console.is_terminal or total < 2:
        yield lambda _name: None
        return
    columns = (
        TextColumn("grading"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[last]}"),
    )
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("grading", total=total, last="")
        yield lambda name: bar.update(task, advance=1, last=name)


CHECK_MARK = {
    CheckStatus.passed: "[green]✔[/green]",
    CheckStatus.failed: "[red]✘[/red]",
    CheckStatus.error: "[red]![/red]",
    CheckStatus.skipped: "[dim]-[/dim]",
}


def print_feedback(
    view: SubmissionReport, unseen: dict[str, tuple[int, float]], console: Console | None = None
) -> None:
    """A candidate's feedback on the checks they may see; `unseen` gives, per problem, how many
    checks were not run here and what they are worth."""
    console = console or Console()
    skipped = [p.problem for p in view.problems if p.status is ProblemStatus.not_attempted]
    for problem in view.problems:
        if problem.status is ProblemStatus.not_attempted:
            continue
        colour = "green" if problem.score == problem.max_score else "yellow"
        console.print(
            f"\n[bold]{escape(problem.problem)}[/bold]  {escape(problem.title)}  "
            f"[{colour}]{fraction(problem.score, problem.max_score)}[/{colour}]"
        )
        note = problem_note(problem)
        if note:
            console.print(f"  [red]{escape(note)}[/red]")
        for check in problem.checks:
            console.print(
                f"  {CHECK_MARK[check.status]} {escape(check.name)}  "
                f"[dim]{fraction(check.points, check.max_points)}[/dim]"
            )
            if check.status is not CheckStatus.passed:
                for line in check_details(check):
                    console.print(f"      {escape(line)}", highlight=False, soft_wrap=True)
        count, worth = unseen.get(problem.problem, (0, 0.0))
        if count:
            console.print(
                f"  [dim]+ {count} hidden check(s) worth {num(worth)} point(s), "
                "graded when you submit[/dim]"
            )
    hidden_total = sum(worth for p, (_, worth) in unseen.items() if p not in skipped)
    console.print(
        f"\n[bold]Checks run here: {fraction(view.total, view.max_total)}[/bold]"
        + (
            f"  (hidden checks worth {num(hidden_total)} more point(s) are graded when you submit)"
            if hidden_total
            else ""
        )
    )
    if skipped:
        console.print(f"[dim]Not attempted: {', '.join(skipped)}[/dim]")
