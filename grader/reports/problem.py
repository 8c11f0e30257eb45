"""A problem as a candidate reads it: statement, contract, checks and starter file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from grader.reports.text import num
from grader.specs.problem import Visibility

if TYPE_CHECKING:
    from grader.courses.catalog import Problem


@dataclass(frozen=True)
class Summary:
    """A problem as `grader problems` lists it (and `--json` writes it)."""

    number: int
    id: str
    points: float
    visible_checks: int
    hidden_checks: int
    title: str


def summary(problem: Problem) -> Summary:
    spec = problem.spec
    visible = sum(c.visibility is Visibility.visible for c in spec.checks)
    hidden, _ = problem.hidden()
    return Summary(spec.number, spec.id, problem.points, visible, hidden, spec.title)


def describe(problem: Problem) -> str:
    spec = problem.spec
    visible = [c for c in spec.checks if c.visibility is Visibility.visible]
    hidden, hidden_points = problem.hidden()
    lines = [
        problem.statement.rstrip(),
        "",
        "## Contract",
        "",
        f"- File: `{spec.entry}`, defining {', '.join(f'`{s}`' for s in spec.symbols)} "
        f"({spec.kind}).",
        f"- Points: {num(problem.points)}.",
    ]
    if spec.forbidden:
        lines.append(f"- Forbidden: {', '.join(f'`{f}`' for f in spec.forbidden)}.")
    lines += ["", "## Checks", ""]
    lines += [f"- {c.name} ({num(c.points)})" for c in visible]
    if hidden:
        lines.append(f"- and {hidden} hidden check(s) worth {num(hidden_points)} point(s)")
    lines += ["", f"## Starter: `{spec.entry}`", "", "```python", problem.starter.rstrip(), "```"]
    return "\n".join(lines) + "\n"
