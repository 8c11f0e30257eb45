"""Every output format stays well-formed whatever bytes a candidate controls: a folder name and
messages with terminal escapes, control characters, markup, HTML and spreadsheet formulas."""

from __future__ import annotations

import csv
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from grader.outputs import Options, write_outputs
from grader.reports.models import CheckStatus, ProblemStatus, Student, SubmissionReport
from grader.reports.terminal import print_scores
from tests.reports import check, problem, submission

NAME = '=HYPERLINK("x")[bold red]177/177[/]\x1b[2J\x1b[1A\r\x07\ufffe'  # no NUL: a folder name
MESSAGE = "<script>alert(1)</script> **bold** [link](http://x) |\n# Heading\x1b]0;title\x07\x0c\x00"
ESCAPES = ("\x1b", "\x00", "\x07", "\r", "\x0c")


@pytest.fixture
def hostile() -> list[SubmissionReport]:
    checks = [check("matches the reference", CheckStatus.failed, 3, message=MESSAGE)]
    solved = problem("split_heads", ProblemStatus.crashed, checks, 3, MESSAGE, stdout=MESSAGE)
    return [submission(NAME, [solved], 0, MESSAGE, Student(id=NAME, name=MESSAGE))]


@pytest.mark.parametrize("reveal", [False, True])
def test_every_format_is_well_formed(
    hostile: list[SubmissionReport], tmp_path: Path, reveal: bool
) -> None:
    formats = ["csv", "markdown", "html", "junit", "gradescope", "github-classroom", "classroom50"]
    opts = Options(tmp_path, reveal_after_due=reveal, environ={}, echo=lambda _: None)
    written = [Path(p) for p in write_outputs(hostile, formats, opts)]
    assert written
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert not any(c in text for c in ESCAPES), path.name
    ET.parse(tmp_path / "junit.xml")  # parses: no XML-illegal characters
    html = (tmp_path / "report.html").read_text()
    assert "<script>" not in html and "&lt;script&gt;" in html
    for md in [tmp_path / "summary.md", *tmp_path.glob("feedback/*.md")]:
        text = md.read_text()
        assert "<script>" not in text and "\n# Heading" not in text and "**bold**" not in text
    with (tmp_path / "summary.csv").open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[1][0] == "points possible"
    assert rows[2][0].startswith("'=") and rows[2][1].startswith("'=")


def test_terminal_table_shows_the_name_as_text(hostile: list[SubmissionReport]) -> None:
    console = Console(width=80, record=True, color_system=None)
    print_scores(hostile, {"split_heads": 4}, console)
    text = console.export_text()
    assert "[bold red]177/177[/]" in text  # the markup printed as text, not obeyed
    assert not any(c in text for c in ESCAPES)
