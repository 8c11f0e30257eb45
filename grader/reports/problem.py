"""A problem as a candidate reads it: statement, contract, checks and starter file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grader.reports.text import num
from grader.specs.problem import Visibility

if TYPE_CHECKING:
    from grader.courses.catalog import Problem


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
