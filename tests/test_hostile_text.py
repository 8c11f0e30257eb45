"""Every output format stays well-formed whatever bytes a candidate controls: a folder name and
messages with terminal escapes, control characters, invisible and direction-changing
characters, markup, HTML and spreadsheet formulas."""

from __future__ import annotations

import base64
import csv
import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader.cli.main import cli
from grader.names import report_file, slug
from grader.outputs import Options, write_outputs
from grader.reports import safe
from grader.reports.models import CheckStatus, ProblemStatus, Student, SubmissionReport, read_report
from grader.reports.terminal import print_scores
from tests.reports import check, problem, submission
from tests.test_fail_closed import COMPLETE, ONE_PROBLEM, SPLIT_HEADS, gradebook

NAME = '=HYPERLINK("x")[bold red]177/177[/]\x1b[2J\x1b[1A\r\x07\ufffe\u202e\u200b'  # no NUL
MESSAGE = "<script>alert(1)</script> **bold** [link](http://x) |\n# Heading\x1b]0;title\x07\x0c\x00"
ESCAPES = ("\x1b", "\x00", "\x07", "\r", "\x0c")
# Each reads "control" where invisible characters are shown as nothing.
LOOKALIKES = [
    "con\u200btrol",  # zero-width space
    "\u2067control\u2069\u200d",  # bidi isolates, zero-width joiner
    "\u202econtrol",  # right-to-left override
    "control\ufeff",  # byte order mark
    "control\ufe0f",  # variation selector
    "control\u3164",  # Hangul filler
    "control\u00a0",  # no-break space
    "control\u2028",  # line separator
    "control\ue000",  # private use
    "control\U000e0041",  # tag
]


def invisible(text: str) -> list[str]:
    """The characters of `text` that show nothing (or reorder the rest), but tab and newline."""
    return [c for c in text if c not in "\t\n" and (not c.isprintable() or c in "\ufe0f\u3164")]


def decoded(path: Path) -> str:
    """A written file's text, with a JSON file's strings as they are shown, not as escapes."""
    text = path.read_text(encoding="utf-8")
    return json.dumps(json.loads(text), ensure_ascii=False) if path.suffix == ".json" else text


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
    echoed: list[str] = []
    opts = Options(tmp_path, reveal_after_due=reveal, environ={}, echo=echoed.append)
    written = [Path(p) for p in write_outputs(hostile, formats, opts)]
    assert written
    (result,) = [line.removeprefix("result=") for line in echoed if line.startswith("result=")]
    classroom = json.dumps(json.loads(base64.b64decode(result)), ensure_ascii=False)
    for name, text in [*((p.name, decoded(p)) for p in written), ("classroom", classroom)]:
        assert not any(c in text for c in ESCAPES), name
        inert = re.sub("(?i)([@:w])\u2060", r"\1", text)  # the grader's own word joiners
        assert not invisible(inert), name
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
    console = Console(width=120, record=True, color_system=None)
    print_scores(hostile, {"split_heads": 4}, console)
    text = console.export_text()
    assert "[bold red]177/177[/]" in text  # the markup printed as text, not obeyed
    assert not any(c in text for c in ESCAPES)


@pytest.mark.parametrize(
    "render", [safe.plain, safe.html, safe.markdown, safe.csv_cell, safe.terminal]
)
def test_names_that_differ_by_invisible_characters_never_look_alike(
    render: Callable[[str], str],
) -> None:
    shown = [render(name) for name in ["control", *LOOKALIKES]]
    assert len(set(shown)) == len(shown)
    assert not invisible("".join(shown))
    assert render("con\u200btrol") == render("con") + render("\\u200btrol")  # the escape shows


def test_plain_keeps_visible_text_and_escapes_the_rest() -> None:
    assert safe.plain("Zoë 日本 → ✓\tα\n") == "Zoë 日本 → ✓\tα\n"
    assert safe.plain("\x1b[2J\r\x85\ud800\uffff") == "\\u001b[2J\\u000d\\u0085\\ud800\\uffff"
    assert safe.plain("\U000e0041\U000e0100") == "\\U000e0041\\U000e0100"
    assert safe.plain(safe.plain(NAME)) == safe.plain(NAME)


def test_a_batch_of_lookalike_names_shows_each_as_itself(tmp_path: Path) -> None:
    """A correct control and folders whose names read "control" once invisible characters are
    dropped: all graded, and every output shows each name apart, with its escapes."""
    batch = tmp_path / "class"
    shutil.copytree(COMPLETE, batch / "control")
    names = ["control", *LOOKALIKES[:4]]
    for name in names[1:]:
        (batch / name).mkdir()
        shutil.copyfile(SPLIT_HEADS, batch / name / "split_heads.py")
    out = tmp_path / "reports"
    formats = "csv,markdown,html,junit,gradescope"
    args = ["grade", str(batch), "--out", str(out), *ONE_PROBLEM, "--format", formats]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert not invisible(result.output)
    shown = [safe.plain(name) for name in names]
    assert shown[1:] == [
        "con\\u200btrol",
        "\\u2067control\\u2069\\u200d",
        "\\u202econtrol",
        "control\\ufeff",
    ]
    assert all(f" {name} " in result.output for name in shown)  # the terminal table's rows
    for name in names:
        report = read_report(out / report_file(name))
        assert report.submission == name and report.total == report.max_total
    assert sorted(gradebook(out)) == sorted(shown)
    files = [out / "summary.md", out / "report.html", out / "junit.xml"]
    for path in [*files, *out.glob("feedback/*"), *out.glob("gradescope/*.json")]:
        assert not invisible(decoded(path)), path.name
    for name, text in zip(names, shown, strict=True):
        assert safe.markdown(name) in (out / "summary.md").read_text()
        assert safe.html(name) in (out / "report.html").read_text()
        assert f'name="{text}"' in (out / "junit.xml").read_text()
        page = (out / "feedback" / f"{slug(name)}.html").read_text()
        assert f"Feedback: {safe.html(name)}" in page
        results = json.loads((out / "gradescope" / f"{slug(name)}.json").read_text())
        assert results["output"].startswith(f"{text}: ")


LIVE = re.compile(r"(?<![\w@])@\w|www\.|://", re.IGNORECASE)
"""What GitHub's Markdown makes a mention (it notifies) or a link of."""


def test_markdown_makes_no_mention_or_link_of_candidate_text(
    hostile: list[SubmissionReport], tmp_path: Path
) -> None:
    """A submission named `@octocat www.evil.example` beside the correct control: both graded,
    the control with full marks, and no Markdown output (the feedback pages, the class summary,
    a Classroom 50 Release, a step summary) mentions anyone or links anywhere the candidate
    chose; the name still reads as itself."""
    batch = tmp_path / "class"
    shutil.copytree(COMPLETE, batch / "control")
    name = "@octocat www.evil.example"
    (batch / name).mkdir()
    shutil.copyfile(SPLIT_HEADS, batch / name / "split_heads.py")
    out = tmp_path / "reports"
    args = ["grade", str(batch), "--out", str(out), *ONE_PROBLEM, "--format", "markdown"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for graded in ("control", name):
        report = read_report(out / report_file(graded))
        assert report.total == report.max_total, report.message
    pages = [out / "summary.md", out / "feedback" / f"{slug(name)}.md"]
    linked = hostile[0].model_copy(update={"message": "see HTTPS://evil.example, WWW.evil.example"})
    summary = tmp_path / "step-summary.md"
    opts = Options(tmp_path / "one", environ={"GITHUB_STEP_SUMMARY": str(summary)})
    pages += map(Path, write_outputs([linked], ["classroom50", "github-classroom"], opts))
    for page in pages:
        text = page.read_text()
        assert not LIVE.search(text), (page.name, LIVE.search(text))
    assert "@\u2060octocat w\u2060ww.evil.example" in pages[1].read_text()
    release = (tmp_path / "one" / "classroom50" / "release-body.md").read_text()
    assert "HTTPS:\u2060//evil.example, W\u2060WW.evil.example" in release


def test_every_command_prints_candidate_text_through_one_escaper(tmp_path: Path) -> None:
    """A submission named with terminal escapes (`ESC[99F ESC[J` would move the cursor up and
    wipe what `grader similarity` printed before it) beside the correct control and a copy of
    it: `grader grade`'s table and warnings, `grader similarity`'s pairs and an error line
    show each escape as text, and the control keeps full marks."""
    batch = tmp_path / "class"
    name = "mallory\x1b[99F\x1b[J"
    for folder in ("control", "copy", name):
        shutil.copytree(COMPLETE, batch / folder)
    (batch / name / "SplitHeads.py").write_text("x = 1\n")  # a note names it
    (batch / "split_heads.py\x1b[2J.zip").write_bytes(b"not a zip")  # a warning names it
    out = tmp_path / "reports"
    runner = CliRunner()
    printed = []
    for args in (
        ["grade", str(batch), "--out", str(out), *ONE_PROBLEM],
        ["similarity", str(batch), "--problem", "split_heads"],
        ["report", str(batch / name)],
    ):
        result = runner.invoke(cli, args, catch_exceptions=False)
        printed.append(result.output)
        assert not any(c in result.output for c in ESCAPES), (args[0], result.output)
    assert read_report(out / "control.json").total == read_report(out / "control.json").max_total
    grade, compared, error = printed
    assert "mallory\\u001b[99F\\u001b[J" in grade and "\\u001b[2J.zip" in grade
    assert compared.count("mallory\\u001b[99F\\u001b[J") >= 2, compared  # its pairs
    assert "mallory\\u001b[99F\\u001b[J" in error


LONE_SURROGATES = {
    "self_attention.py": (
        "    def forward(self, x):\n",
        "        raise ValueError('boom \\ud800 \\udcff')\n",
    ),
    "multi_head_self_attention.py": (
        "        self.W_o = nn.Linear(embedding_dim, embedding_dim, bias=False)\n",
        "        self.add_module('x\\ud800y', nn.Linear(1, 1))\n",
    ),
}


def test_lone_surrogates_in_candidate_text_are_the_candidate_s_verdict(tmp_path: Path) -> None:
    """An exception's message and a parameter's name holding lone surrogates (valid in Python
    text and in JSON, not in the host's strict reader) get the verdicts they earn, as text:
    they made the records unreadable, the problem "crashed" and its later probes unread."""
    batch = tmp_path / "batch"
    for name in ("control", "surrogates"):
        shutil.copytree(COMPLETE, batch / name)
    for file, (after, added) in LONE_SURROGATES.items():
        path = batch / "surrogates" / file
        text = path.read_text()
        assert after in text
        path.write_text(text.replace(after, after + added, 1))
    out = tmp_path / "out"
    problems = "self_attention,multi_head_self_attention"
    args = ["grade", str(batch), "--out", str(out), "--backend", "local", "--problem", problems]
    CliRunner().invoke(cli, args, catch_exceptions=False)
    control = read_report(out / "control.json")
    assert control.total == control.max_total
    report = read_report(out / "surrogates.json")
    raised, extra = report.problem("self_attention"), report.problem("multi_head_self_attention")
    assert raised.status is ProblemStatus.graded and extra.status is ProblemStatus.graded
    assert any("the call raised: ValueError: boom ? ?" in c.message for c in raised.checks)
    names = next(c for c in extra.checks if c.check == "parameter_names")
    assert names.status is CheckStatus.failed and "x?y.weight" in names.message
    assert extra.score > 0  # the checks after it were read
