"""No false failures: correct solutions in different styles score full marks."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from grader.catalog import Catalog
from grader.grade import Grader
from tests.conftest import ROOT

STYLES = sorted((ROOT / "tests" / "styles").glob("*/*.py"))


@pytest.mark.parametrize("problem", sorted({p.parent.name for p in STYLES}))
def test_every_style_scores_full_marks(
    problem: str, tmp_path: Path, catalog: Catalog, make_grader: Callable[..., Grader]
) -> None:
    entry = catalog.problems[problem].spec.entry
    folders = []
    for style in sorted((ROOT / "tests" / "styles" / problem).glob("*.py")):
        folder = tmp_path / style.stem
        folder.mkdir()
        shutil.copyfile(style, folder / entry)
        folders.append(folder)
    assert len(folders) >= 3
    for report in make_grader([problem]).grade_many(folders, jobs=2):
        result = report.problem(problem)
        lost = [(c.name, c.message) for c in result.checks if c.points < c.max_points]
        assert result.score == result.max_score, (report.submission, result.status, lost)
