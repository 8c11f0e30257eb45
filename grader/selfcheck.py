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
from grader.sandboxing.notebooks import NOTEBOOK
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
    """The problems whose entry file is in `path`, made of a notebook there, or named almost
    right (their feedback says what to rename), as staging finds them; NothingToCheck, saying
    what was expected and what to rename, when there is none."""
    problems = catalog.problems.values()
    files, others = files_found(path, {p.spec.entry: wanted(p.spec) for p in problems})
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
    """The problem a file stands for: its entry file, or a notebook named as it; NothingToCheck,
    saying to check the folder, for any other file."""
    name = path.name.removesuffix(NOTEBOOK)
    entries = (name, f"{name}.py")
    found = [p for p in catalog.problems.values() if p.spec.entry in entries]
    if not found:
        raise NothingToCheck(
            f"{path.name} is no problem's file: `grader check {path.parent}` checks the "
            "problems of every file there"
        )
    return found


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
