"""Whole submissions as candidates hand them in: every problem's file in one folder."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.courses.catalog import Catalog
from grader.specs.paths import builtin_problems

STYLES = sorted({p.stem for p in builtin_problems().glob("*/accepted/*.py")})


def references(catalog: Catalog, dest: Path) -> Path:
    """The grader's reference solutions gathered as one submission."""
    dest.mkdir(parents=True)
    for problem in catalog.problems.values():
        shutil.copyfile(problem.reference_file, dest / problem.spec.entry)
    return dest


def style(catalog: Catalog, name: str, dest: Path) -> Path:
    """One accepted style, `problems/<problem>/accepted/<style>.py`, every problem in one folder."""
    dest.mkdir(parents=True)
    for problem in catalog.problems.values():
        shutil.copyfile(problem.folder / "accepted" / f"{name}.py", dest / problem.spec.entry)
    return dest


def full_marks(catalog: Catalog) -> float:
    """What a complete correct submission scores: every problem's points."""
    return sum(p.spec.max_score for p in catalog.problems.values())
