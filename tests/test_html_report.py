"""The HTML class report: self-contained, a status per submission and per problem, the class's
plots, pass rates, failures and mistakes, and a drill-down to every check."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from grader.reports.html import render_html
from grader.reports.models import CheckStatus, ProblemStatus, SubmissionReport
from grader.reports.safe import html as escape
from grader.reports.stats import class_stats
from grader.reports.text import check_details
from tests.class_reports import MOST_FREQUENT, realistic_class
from tests.golden import assert_golden
from tests.reports import check, not_attempted, problem, sample_reports, submission
from tests.test_hostile_text import MESSAGE, NAME

SVG = re.compile(r"<svg\b.*?</svg>", re.S)
# What the report itself writes; a tag outside it came from text a candidate controls.
TAGS = {
    *("html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "strong"),
    *("div", "figure", "figcaption", "table", "thead", "tbody", "tr", "th", "td", "a", "small"),
    *("span", "wbr", "code", "details", "summary", "pre", "br"),
}


class Page(HTMLParser):
    """The tags of a page, outside its SVG plots, and the cells of its tables' rows."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.cell: list[str] | None = None
        self.feed(SVG.sub("", text))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append((dict(attrs).get("class") or "", []))
        elif tag == "tr":
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self.cell = []
        elif tag in ("small", "span", "br") and self.cell is not None:
            self.cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][1][-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)

    def table(self, *header: str) -> list[list[str]]:
        """The rows of the first table whose header row starts with `header`."""
        for _, rows in self.tables:
            if tuple(rows[0][: len(header)]) == header:
                return rows
        raise AssertionError(f"no table headed {header}")


@pytest.fixture
def reports() -> list[SubmissionReport]:
    return sample_reports()


def test_html_is_self_contained(reports: list[SubmissionReport]) -> None:
    """One file: no script, nothing fetched; plots inline. The golden file leaves the plots out
    (matplotlib's SVG changes with its version): test_plots checks them."""
    text = render_html(reports)
    assert_golden("report.html", SVG.sub("<svg><!-- plot --></svg>", text))
    page = Page(text)
    ids = {attrs["id"] for _, attrs in page.tags if attrs.get("id")}
    for tag, attrs in page.tags:
        assert tag in TAGS, tag
        assert "src" not in attrs, tag
        href = attrs.get("href")
        assert href is None or href[1:] in ids, href  # links within the page only
    for reference in re.findall(r"url\(([^)]*)\)|href=\"([^\"]*)\"", text):
        assert "".join(reference).startswith("#"), reference  # the SVGs' clip paths too
    assert "@import" not in text and "<script" not in text
    assert len(SVG.findall(text)) == 2
    assert "HIDDEN-SECRET message" in text  # the instructor's report has everything


def test_status_per_submission_and_problem(reports: list[SubmissionReport]) -> None:
    """An unattempted problem is `-`, never 0/max; a failed one is starred with its reason; each
    submission has the gradebook's status."""
    empty = submission(
        "empty", [not_attempted(p.problem, p.max_score) for p in reports[0].problems], 3
    )
    rows = Page(render_html([*reports, empty])).table("submission")
    assert rows[0] == [
        "submission",
        "split_heads /8",
        "causal_self_attention /5",
        "mha_by_loop /4",
        "total /17",
        "status",
    ]
    by_name = {row[0].split()[0]: row[1:] for row in rows[1:]}
    assert by_name["full"] == ["8", "5", "-", "13", "ok 2 of 3 attempted"]
    assert by_name["mistakes"] == [
        "2",
        "0* forbidden",
        "0* import error",
        "2",
        "ok 3 of 3 attempted",
    ]
    assert by_name["partial"][1:] == [
        "5",
        "0* grader error",
        "5",
        "grader error: regrade 2 of 3 attempted",
    ]
    assert by_name["empty"] == ["-", "-", "-", "0", "not attempted 0 of 3 attempted"]
    assert rows[1][0] == "full Ada Lovelace (1815)"


def test_the_most_frequent_failure_comes_first() -> None:
    reports = realistic_class()
    stats = class_stats(reports)
    first = stats.failures[0]
    assert (first.problem, first.failure) == MOST_FREQUENT
    assert len(first.submissions) > len(stats.failures[1].submissions)
    rows = Page(render_html(reports)).table("failure")
    assert rows[1][:3] == ["timed out", "mha_by_loop", str(len(first.submissions))]
    forbidden = next(r for r in rows if r[0] == "forbidden API used")
    assert "scaled_dot_product_attention" in forbidden[-1]  # what was forbidden, not "scores 0"


def test_failures_and_mistakes(reports: list[SubmissionReport]) -> None:
    page = Page(render_html(reports))
    failures = page.table("failure")
    assert [r[:3] for r in failures[1:]] == [
        ["forbidden API used", "causal_self_attention", "1"],
        ["import error", "mha_by_loop", "1"],
        ["grader error", "mha_by_loop", "1"],
    ]
    assert failures[1][-1] == "the problem scores 0 (see its forbidden API check)"
    mistakes = page.table("problem", "mistake")
    assert ["split_heads", "view_no_transpose", "1", "heads split with view"] in mistakes


def test_pass_rates(reports: list[SubmissionReport]) -> None:
    """Per problem: attempted and full marks; per check: passes out of the submissions it ran on."""
    stats = class_stats(reports)
    split = stats.problems[0]
    assert (split.problem, split.attempted, split.outcomes["full marks"]) == ("split_heads", 2, 1)
    assert split.outcomes["not attempted"] == 1
    assert stats.problems[2].outcomes == {
        "full marks": 0,
        "partly": 0,
        "no points": 0,
        "failed": 2,
        "not attempted": 1,
    }
    channels = next(c for c in stats.checks if c.name.endswith("right channels in each head"))
    assert (channels.passed, channels.ran, channels.rate) == (1, 2, 0.5)
    page = Page(render_html(reports))
    rates = page.table("problem", "max")
    assert rates[1][:4] == ["split_heads The split_heads problem", "8", "2/3", "1 50%"]
    hardest = page.table("problem", "check")
    assert all(row[-1] != "100%" for row in hardest[1:])
    assert ["split_heads", "split_heads puts the right channels in each head", "visible", "1/2",
            "50%"] in hardest  # fmt: skip


def test_drill_down(reports: list[SubmissionReport]) -> None:
    """Each submission folds out to each problem it attempted, each check with its message."""
    text = render_html(reports)
    for index, report in enumerate(reports):
        start = text.index(f'<details class="submission" id="s{index}">')
        end = text.find('<details class="submission"', start + 1)
        section = text[start : end if end > 0 else None]
        for p in report.problems:
            if p.status is ProblemStatus.not_attempted:
                assert p.problem in section.split("Not attempted:")[1]
                continue
            assert f"<strong>{p.problem}</strong>" in section
            assert escape(p.message) in section
            for c in p.checks:
                assert escape(c.name) in section
                assert all(escape(line) in section for line in check_details(c))
    assert 'href="#s1"' in text


def test_plots() -> None:
    """Two SVG plots drawn by matplotlib, inline, the same every time: no date, no version."""
    reports = realistic_class()
    text = render_html(reports)
    assert text == render_html(reports)
    plots = SVG.findall(text)
    assert len(plots) == 2
    for plot in plots:
        root = ET.fromstring(plot)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert root.find("{http://www.w3.org/2000/svg}title") is not None
        assert "Matplotlib v" not in plot and "dc:date" not in plot
    assert "<?xml" not in text and "<!DOCTYPE svg" not in text
    assert "mha_by_loop" in plots[1] and "not attempted" in plots[1]


def test_matplotlib_is_imported_only_to_draw() -> None:
    """The command line starts without matplotlib; rendering the report imports it."""
    code = (
        "import sys, grader.cli.main, grader.reports.html\n"
        "assert 'matplotlib' not in sys.modules\n"
        "from tests.reports import sample_reports\n"
        "grader.reports.html.render_html(sample_reports())\n"
        "assert 'matplotlib' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_hostile_text_in_every_section() -> None:
    """A name and messages made of markup stay text in the table, the failures and the
    drill-down."""
    checks = [check("matches the reference", CheckStatus.failed, 3, message=MESSAGE)]
    crashed = problem("split_heads", ProblemStatus.crashed, checks, 3, MESSAGE, stdout=MESSAGE)
    text = render_html([submission(NAME, [crashed], 0, MESSAGE)])
    page = Page(text)
    assert all(tag in TAGS for tag, _ in page.tags)
    assert text.count("&lt;script&gt;") >= 4  # failures, the drill-down's note, check, stdout
    assert page.table("submission")[1][0].startswith('=HYPERLINK("x")[bold red]')
