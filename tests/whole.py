"""Whole submissions as candidates hand them in: every problem's file in one folder."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.courses.catalog import Catalog
from tests.conftest import ROOT

STYLES_DIR = ROOT / "tests" / "styles"
STYLES = sorted({p.stem for p in STYLES_DIR.glob("*/*.py")})


def references(catalog: Catalog, dest: Path) -> Path:
    """The grader's reference solutions gathered as one submission."""
    dest.mkdir(parents=True)
    for problem in catalog.problems.values():
        shutil.copyfile(problem.reference_file, dest / problem.spec.entry)
    return dest


def style(catalog: Catalog, name: str, dest: Path) -> Path:
    """One style of `tests/styles/<problem>/<style>.py`, every problem in one folder."""
    dest.mkdir(parents=True)
    for problem in catalog.problems.values():
        shutil.copyfile(STYLES_DIR / problem.spec.id / f"{name}.py", dest / problem.spec.entry)
    return dest


def full_marks(catalog: Catalog) -> float:
    """What a complete correct submission scores: every problem's points."""
    return sum(p.spec.max_score for p in catalog.problems.values())
