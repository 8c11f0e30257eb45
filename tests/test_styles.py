"""No false failures: correct solutions, gathered as whole submissions (every problem in one
folder, files importing each other), score full marks on every problem."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.models import SubmissionReport
from grader.specs.paths import builtin_problems
from tests import whole


def lost(report: SubmissionReport) -> list[tuple[str, str, str]]:
    return [
        (p.problem, c.name, c.message)
        for p in report.problems
        for c in p.checks
        if c.points < c.max_points
    ] + [(p.problem, p.status, p.message) for p in report.problems if p.score < p.max_score]


def test_every_problem_has_three_styles(catalog: Catalog) -> None:
    assert len(whole.STYLES) >= 3
    for problem in catalog.problems:
        for name in whole.STYLES:
            assert (catalog.problems[problem].folder / "accepted" / f"{name}.py").is_file()


def test_styles_import_each_other() -> None:
    """The styles exercise what candidates do: import a sibling file, subclass its class."""
    imports = re.compile(r"^from (\w+) import", re.MULTILINE)
    entries = {p.name for p in builtin_problems().iterdir()}
    for name in whole.STYLES:
        texts = [p.read_text() for p in builtin_problems().glob(f"*/accepted/{name}.py")]
        assert any(set(imports.findall(t)) & entries for t in texts), name


def test_references_as_one_submission_score_full_marks(
    tmp_path: Path, catalog: Catalog, make_grader: Callable[..., Grader]
) -> None:
    report = make_grader().grade(whole.references(catalog, tmp_path / "references"))
    assert report.total == report.max_total == whole.full_marks(catalog), lost(report)


def test_each_style_as_one_submission_scores_full_marks(
    tmp_path: Path, catalog: Catalog, make_grader: Callable[..., Grader]
) -> None:
    folders = [whole.style(catalog, name, tmp_path / name) for name in whole.STYLES]
    for report in make_grader().grade_many(folders, jobs=2):
        assert report.total == report.max_total, (report.submission, lost(report))
