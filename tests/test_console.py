"""The score table in a terminal: every figure readable at 80 columns, nothing cut short."""

from __future__ import annotations

import pytest
from rich.console import Console

from grader.courses.catalog import Catalog
from grader.reports.models import ProblemReport, ProblemStatus, SubmissionReport
from grader.reports.terminal import print_scores
from tests.reports import submission

LONG_NAME = "a-submission-whose-name-is-far-too-long-for-any-column-of-the-table"
STATUSES = [
    ProblemStatus.forbidden_api,
    ProblemStatus.timeout,
    ProblemStatus.import_error,
    ProblemStatus.crashed,
    ProblemStatus.grader_error,
    ProblemStatus.not_attempted,
]


def outcome(problem: str, max_score: float, status: ProblemStatus, score: float) -> ProblemReport:
    return ProblemReport(problem=problem, status=status, score=score, max_score=max_score)


def eleven_reports(catalog: Catalog) -> list[SubmissionReport]:
    """A full class: full marks, half marks, and a submission with every status."""
    specs = [p.spec for p in catalog.problems.values()]
    graded = ProblemStatus.graded
    full = [outcome(s.id, s.max_score, graded, s.max_score) for s in specs]
    half = [outcome(s.id, s.max_score, graded, s.max_score / 2) for s in specs]
    statuses = [STATUSES[i % len(STATUSES)] for i in range(len(specs))]
    partial = (ProblemStatus.timeout, ProblemStatus.crashed)
    mixed = [
        outcome(s.id, s.max_score, status, 1.5 if status in partial else 0)
        for s, status in zip(specs, statuses, strict=True)
    ]
    return [
        submission("full_marks", full, 0),
        submission(LONG_NAME, half, 1),
        submission("every_status", mixed, 2),
    ]


def render(reports: list[SubmissionReport], catalog: Catalog, width: int) -> str:
    console = Console(width=width, record=True)
    print_scores(reports, {p.spec.id: p.spec.number for p in catalog.problems.values()}, console)
    return console.export_text()


def cell(problem: ProblemReport) -> str:
    if problem.status is ProblemStatus.not_attempted:
        return "-"
    return f"{problem.score:g}" + ("" if problem.status is ProblemStatus.graded else "*")


def rows(lines: list[str], name: str) -> list[list[str]]:
    """The figures on each line that starts with `name`."""
    return [line.split()[1:] for line in lines if line.lstrip().startswith(name)]


@pytest.mark.parametrize("width", [80, 200])
def test_eleven_problems_fit_with_every_figure(catalog: Catalog, width: int) -> None:
    reports = eleven_reports(catalog)
    assert len(catalog.problems) == 11
    text = render(reports, catalog, width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "…" not in text
    numbers = [str(p.spec.number) for p in catalog.problems.values()]
    maxima = [f"/{p.spec.max_score:g}" for p in catalog.problems.values()]
    assert [*numbers, "total"] in [line.split() for line in lines]
    assert ["submission", *maxima, f"/{reports[0].max_total:g}"] in [line.split() for line in lines]
    for report in reports:
        name = report.submission if width == 200 else report.submission[:5]
        assert [*map(cell, report.problems), f"{report.total:g}"] in rows(lines, name)
    for problem in catalog.problems.values():
        assert f"{problem.spec.number} {problem.spec.id}" in text
    flat = " ".join(text.split())  # the notes wrap at 80
    assert "problems 1, 7: forbidden API used" in flat and "problems 5, 11: grader error" in flat


def test_long_names_fold_whole(catalog: Catalog) -> None:
    text = render(eleven_reports(catalog), catalog, 80)
    assert LONG_NAME in "".join(line.split()[0] for line in text.splitlines() if line.strip())


def test_differing_maxima_stay_under_their_scores(catalog: Catalog) -> None:
    """Maxima the submissions disagree on are shown under each score, not in the header."""
    first, second = eleven_reports(catalog)[:2]
    shrunk = [p.model_copy(update={"max_score": p.max_score - 1}) for p in second.problems]
    other = second.model_copy(update={"problems": shrunk, "max_total": second.max_total - 11})
    lines = render([first, other], catalog, 80).splitlines()
    assert "…" not in "".join(lines) and max(map(len, lines)) <= 80
    for report in (first, other):
        row = next(
            i for i, line in enumerate(lines) if line.startswith(f" {report.submission[:5]}")
        )
        scores, maxima = lines[row].split()[1:], lines[row + 1].split()[-12:]
        assert scores == [*(f"{p.score:g}" for p in report.problems), f"{report.total:g}"]
        assert maxima == [*(f"/{p.max_score:g}" for p in report.problems), f"/{report.max_total:g}"]
