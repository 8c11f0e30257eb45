"""The terminal: score tables, the progress bar, a candidate's feedback."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich import box
from rich.columns import Columns
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from grader.reports.models import CheckStatus, ProblemReport, ProblemStatus, SubmissionReport
from grader.reports.problem import Summary
from grader.reports.safe import terminal as escape
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

if TYPE_CHECKING:
    from grader.validate import Outcome

HANG = 2
"""How much further than its first line a wrapped line's continuation is indented."""


@dataclass
class Column:
    """A problem of the score table: its catalog number, and its maximum when every
    submission has the same (then shown once, under the number, not under every score)."""

    number: int
    problem: str
    max_score: float | None


def shared(values: Iterable[float]) -> float | None:
    """The one value all of `values` agree on, or None."""
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def over(top: str, max_score: float | None) -> str:
    """`top`, with `/max_score` on the line below when there is one."""
    return top if max_score is None else f"{top}\n[dim]/{num(max_score)}[/dim]"


def score_columns(reports: list[SubmissionReport], numbers: Mapping[str, int]) -> list[Column]:
    """The problems someone attempted, or handed in something like (`fixable`), by catalog
    number."""
    attempted = {
        p.problem
        for r in reports
        for p in r.problems
        if p.status is not ProblemStatus.not_attempted or fixable(p)
    }
    columns = [
        Column(numbers[problem], problem, shared(r.problem(problem).max_score for r in reports))
        for problem in attempted
    ]
    return sorted(columns, key=lambda c: (c.number, c.problem))


def score_cell(problem: ProblemReport, column_max: float | None) -> str:
    """The score, starred if it has a note, over its maximum unless the header shows that; `-`
    not attempted, `-?` where something like it was found (`fixable`)."""
    if fixable(problem):
        return f"[yellow]-{FIXABLE}[/yellow]"
    if problem.status is ProblemStatus.not_attempted:
        return "[dim]-[/dim]"
    score = f"[red]{num(problem.score)}*[/red]" if problem.status.failed else num(problem.score)
    return over(score, problem.max_score if column_max is None else None)


def score_table(reports: list[SubmissionReport], columns: list[Column]) -> Table:
    """One row per submission, one column per problem headed by its number; only the
    submission's name folds when space is short."""
    table = Table(title="Scores", box=box.SIMPLE_HEAD, show_edge=False, collapse_padding=True)
    table.add_column("submission", style="bold", overflow="fold")
    for column in columns:
        table.add_column(over(str(column.number), column.max_score), justify="right", no_wrap=True)
    max_total = shared(r.max_total for r in reports)
    table.add_column(over("total", max_total), justify="right", style="bold", no_wrap=True)
    for report in reports:
        cells = [score_cell(report.problem(c.problem), c.max_score) for c in columns]
        total = over(num(report.total), report.max_total if max_total is None else None)
        table.add_row(escape(report.submission), *cells, total)
    return table


def legend(columns: list[Column]) -> Columns:
    """The problem each column number stands for."""
    entries = [Text(f"{c.number:>2} {c.problem}") for c in columns]
    return Columns(entries, padding=(0, 3), column_first=True)


def notes(reports: list[SubmissionReport], numbers: Mapping[str, int]) -> Table:
    """Per submission, why its starred scores are starred, with the problems' numbers; and,
    in yellow, what was found of each problem marked `-?`."""
    table = Table.grid(padding=(0, 1), collapse_padding=False, pad_edge=True)
    table.add_column(style="bold", overflow="fold")
    table.add_column(overflow="fold")
    for report in reports:
        starred: dict[str, list[str]] = {}
        for p in report.problems:
            if p.status.failed:
                starred.setdefault(p.status.text, []).append(str(numbers[p.problem]))
        failed = "; ".join(f"{problems(which)}: {note}" for note, which in starred.items())
        lines = [f"[red]{failed}[/red]"] if failed else []
        lines += [
            f"[yellow]problem {numbers[p.problem]}: not attempted: {escape(p.message)}[/yellow]"
            for p in report.problems
            if fixable(p)
        ]
        if lines:
            table.add_row(escape(report.submission), "\n".join(lines))
    return table


def problems(numbers: list[str]) -> str:
    """`problem 1`, `problems 1, 9`: the problems' numbers named as problems, not counts."""
    return ("problem " if len(numbers) == 1 else "problems ") + ", ".join(numbers)


def print_scores(
    reports: list[SubmissionReport], numbers: Mapping[str, int], console: Console | None = None
) -> None:
    """The score table, the legend of its problem numbers (`numbers`: the catalog's, by
    problem id) and the notes on its starred scores."""
    console = console or Console()
    columns = score_columns(reports, numbers)
    console.print(score_table(reports, columns))
    console.print()
    console.print(legend(columns))
    starred = notes(reports, numbers)
    if starred.row_count:
        console.print("\n[bold]Starred scores, and zeros to look at (-?)[/bold]")
        console.print(starred)


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
        yield lambda name: bar.update(task, advance=1, last=escape(name))


def check_mark(status: CheckStatus) -> str:
    """The status's mark, green when it passed, dim when skipped, red otherwise."""
    colour = {CheckStatus.passed: "green", CheckStatus.skipped: "dim"}.get(status, "red")
    return f"[{colour}]{status.mark}[/{colour}]"


def hanging(console: Console, markup: str, indent: int = 0) -> Text:
    """`markup` wrapped to the console's width, its first line indented by `indent`, the lines
    it wraps onto by `indent + HANG`; a word too long for a line is folded."""
    text = Text.from_markup(markup)
    width = max(console.width - indent - HANG, 10)
    lines = text.wrap(console, width, overflow="fold")
    out = Text()
    for i, line in enumerate(lines):
        line.rstrip()
        out.append(("\n" if i else "") + " " * (indent + (HANG if i else 0)))
        out.append_text(line)
    return out


def print_problems(summaries: list[Summary], console: Console | None = None) -> None:
    """The course's problems: number, id, points, checks shown and hidden; the title, the one
    column that wraps, under its own heading."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("problem", no_wrap=True)
    table.add_column("points", justify="right", no_wrap=True)
    table.add_column("checks", justify="right", no_wrap=True)
    table.add_column("hidden", justify="right", no_wrap=True)
    table.add_column("title", overflow="fold", ratio=1)
    for s in summaries:
        table.add_row(
            str(s.number), escape(s.id), num(s.points), str(s.visible_checks),
            str(s.hidden_checks), escape(s.title),
        )  # fmt: skip
    (console or Console()).print(table)


def print_feedback(
    view: SubmissionReport, unseen: dict[str, tuple[int, float]], console: Console | None = None
) -> None:
    """A candidate's feedback on the checks they may see; `unseen` gives, per problem, how many
    checks were not run here and what they are worth. Each line fits the console's width, the
    lines it wraps onto indented under it, in a terminal; elsewhere (a file, a pipe) each line
    is one line, however long."""
    console = console or Console()

    def say(markup: str, indent: int = 0) -> None:
        text = (
            hanging(console, markup, indent)
            if console.is_terminal
            else Text.from_markup(" " * indent + markup)
        )
        console.print(text, soft_wrap=True, highlight=False)

    if view.message:  # what was made of notebooks, what was left out
        say(f"[dim]{escape(view.message)}[/dim]")
    skipped = [p.problem for p in view.problems if p.status is ProblemStatus.not_attempted]
    for problem in view.problems:
        if problem.status is ProblemStatus.not_attempted:
            continue
        colour = "green" if problem.score == problem.max_score else "yellow"
        console.print()
        say(
            f"[bold]{escape(problem.problem)}[/bold]  {escape(problem.title)}  "
            f"[{colour}]{fraction(problem.score, problem.max_score)}[/{colour}]"
        )
        note = problem_note(problem)
        if note:
            say(f"[red]{escape(note)}[/red]", 2)
        for check, details in zip(
            problem.checks, details_once(problem, problem.checks), strict=True
        ):
            say(
                f"{check_mark(check.status)} {escape(check.name)}  "
                f"[dim]{fraction(scored(problem, check), check.max_points)}[/dim]",
                2,
            )
            for line in details:
                say(escape(line), 6)
        count, worth = unseen.get(problem.problem, (0, 0.0))
        if count:
            say(
                f"[dim]+ {count} hidden check(s) worth {num(worth)} point(s), "
                "graded when you submit[/dim]",
                2,
            )
    hidden_total = sum(worth for p, (_, worth) in unseen.items() if p not in skipped)
    console.print()
    say(
        f"[bold]Checks run here: {fraction(view.total, view.max_total)}[/bold]"
        + (
            f"  (hidden checks worth {num(hidden_total)} more point(s) are graded when you submit)"
            if hidden_total
            else ""
        )
    )
    if skipped:
        say(f"[dim]Not attempted: {', '.join(skipped)}[/dim]")
        for note in absence_notes(view.problems):
            say(escape(note), 2)
