"""`grader check`: a candidate grades their own work, quickly, on the checks they may see.

Importing this module does not import torch: `grader check` starts its worker first."""

from __future__ import annotations

from pathlib import Path

from grader.courses.catalog import Catalog, Problem
from grader.errors import GraderError
from grader.reports.models import SubmissionReport
from grader.reports.redact import candidate_view
from grader.sandboxing.backends.base import Backend, LimitOverrides
from grader.sandboxing.claims import wanted
from grader.sandboxing.locate import locate
from grader.sandboxing.notebooks import NOTEBOOK, defines, notebook_module
from grader.sandboxing.staging import files_found
from grader.specs.problem import Visibility
from grader.verdict.near import missing_file


def shown_visibilities(reveal_after_due: bool) -> set[Visibility]:
    return (
        {Visibility.visible, Visibility.after_due_date}
        if reveal_after_due
        else {Visibility.visible}
    )


def unseen_checks(problems: list[Problem], shown: set[Visibility]) -> dict[str, tuple[int, float]]:
    """Per problem: how many checks a candidate cannot run, and what they are worth."""
    unseen = {}
    for problem in problems:
        hidden = [c for c in problem.spec.checks if c.visibility not in shown]
        count, points = problem.withheld
        unseen[problem.spec.id] = (len(hidden) + count, sum(c.points for c in hidden) + points)
    return unseen


class NothingToCheck(GraderError):
    """The folder holds no problem file."""


def attempted(catalog: Catalog, path: Path) -> list[Problem]:
    """The problems whose entry file is in `path` (at its top or in its one folder that holds
    some, as grading finds them), made of a notebook there, or named almost right (their
    feedback says what to rename), as staging finds them; NothingToCheck, saying what was
    expected and what to rename, when there is none."""
    problems = catalog.problems.values()
    located = locate(path, catalog.entries).folder
    files, others = files_found(located, {p.spec.entry: wanted(p.spec) for p in problems})
    near = {e: missing_file(e, [*files, *others], catalog.entries) for e in catalog.entries}
    found = [p for p in problems if p.spec.entry in files or near[p.spec.entry]]
    if not files & catalog.entries:
        renames = "; ".join(hint for hint in near.values() if hint)
        expected = (
            f"expected one or more of {', '.join(sorted(catalog.entries))} "
            "(`grader init PROBLEM` writes a starter)"
        )
        raise NothingToCheck(f"no problem file in {path}: {renames or expected}")
    return found


def problem_of(catalog: Catalog, path: Path) -> list[Problem]:
    """The problems a file stands for: its entry file, a notebook named as it, or a notebook
    whose code defines the names of problems not handed in as `.py` files beside it (as
    staging reads it); NothingToCheck, naming the fix, for any other file: the rename of a name
    almost right, or to check the folder."""
    name = path.name.removesuffix(NOTEBOOK)
    entries = (name, f"{name}.py")
    found = [p for p in catalog.problems.values() if p.spec.entry in entries]
    if not found and path.name.endswith(NOTEBOOK):
        found = notebook_problems(catalog, path)
    if not found:
        hints = [missing_file(e, [path.name], catalog.entries) for e in sorted(catalog.entries)]
        fix = next((h.split(": ", 1)[1] for h in hints if h), None)
        raise NothingToCheck(
            f"{path.name} is no problem's file: "
            + (f"{fix}" if fix else "")
            + ("; " if fix else "")
            + f"`grader check {path.parent}` checks the problems of every file there"
        )
    return found


def notebook_problems(catalog: Catalog, path: Path) -> list[Problem]:
    """The problems whose names the notebook's code cells define, of those with no `.py` file
    beside it."""
    converted = notebook_module(path.read_bytes())
    if converted is None:
        return []
    return [
        p
        for p in catalog.problems.values()
        if not (path.parent / p.spec.entry).exists() and defines(converted.source, p.spec.symbols)
    ]


def check_submission(
    path: Path,
    catalog: Catalog,
    problems: list[Problem],
    backend: Backend,
    seed: int,
    reveal_after_due: bool = False,
    limits: LimitOverrides | None = None,
) -> tuple[SubmissionReport, dict[str, tuple[int, float]]]:
    """Grade `path` on the shown checks only; the candidate's view and the unseen checks."""
    from grader.grade import Grader  # torch: `attempted` is read before it is imported

    shown = shown_visibilities(reveal_after_due)
    restricted = [p.restricted(shown) for p in problems]
    with Grader(catalog, restricted, backend, seed, limits) as grader:
        report = grader.grade(path)
    view = candidate_view(report, reveal_after_due, own_text=True)  # their machine, their text
    return view, unseen_checks(problems, shown)
