"""Every output format: golden files, and each format's published fields."""

from __future__ import annotations

import base64
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from grader.errors import GraderError
from grader.outputs import Options, read_reports, write_outputs
from grader.platforms.classroom.results import classroom_result, encode_result
from grader.platforms.gradescope.results import gradescope_results
from grader.reports.csv import write_summary_csv
from grader.reports.html import render_html
from grader.reports.junit import render_junit
from grader.reports.markdown import candidate_feedback, class_summary
from grader.reports.models import ProblemStatus, SubmissionReport, write_report
from grader.reports.redact import candidate_view
from grader.reports.terminal import print_feedback, print_scores
from grader.reports.text import num
from grader.specs.problem import Visibility
from tests.classroom_reporter import logged_score, recorded_score
from tests.golden import assert_golden
from tests.gradescope_format import validate_gradescope
from tests.reports import (
    FAIL,
    OK,
    H,
    check,
    not_attempted,
    problem,
    sample_reports,
    submission,
)

NUMBER: tuple[type, ...] = (int, float)


@pytest.fixture
def reports() -> list[SubmissionReport]:
    return sample_reports()


def zeroed_problem(report: SubmissionReport) -> SubmissionReport:
    """`report` with its second problem zeroed by a forbidden API, as a report saved before the
    judge zeroed its checks too: they still hold the points they passed for."""
    problems = list(report.problems)
    update = {"score": 0.0, "status": ProblemStatus.forbidden_api}
    problems[1] = problems[1].model_copy(update=update)
    return report.model_copy(update={"problems": problems, "total": sum(p.score for p in problems)})


def test_csv(reports: list[SubmissionReport], tmp_path: Path) -> None:
    write_summary_csv(reports, tmp_path / "summary.csv")
    text = (tmp_path / "summary.csv").read_text()
    assert_golden("summary.csv", text)
    header, possible, *rows = text.splitlines()
    assert header.split(",")[:3] == ["submission", "student_id", "student_name"]
    assert header.split(",")[-4:] == ["total", "max_total", "status", "notes"]
    assert possible == "points possible,,,8,5,4,17,17,,"
    assert rows[0].startswith("full,1815,Ada Lovelace,")
    assert [r.split(",")[0] for r in rows] == ["full", "mistakes", "partial"]
    assert rows[2].split(",")[-2] == "grader_error"


def test_markdown(reports: list[SubmissionReport]) -> None:
    assert_golden("summary.md", class_summary(reports))
    for report in reports:
        feedback = candidate_feedback(candidate_view(report))
        assert_golden(f"feedback_{report.submission}.md", feedback)


def test_markdown_status_is_the_gradebook_s(tmp_path: Path) -> None:
    """A submission that attempted nothing is `not attempted` in the summary, as in the CSV."""
    empty = submission("empty", [not_attempted("split_heads", 8)], 3)
    reports = [*sample_reports(), empty]
    write_summary_csv(reports, tmp_path / "summary.csv")
    rows = (tmp_path / "summary.csv").read_text().splitlines()[2:]
    statuses = {r.split(",")[0]: r.split(",")[-2] for r in rows}
    summary = class_summary(reports)
    for name, status in statuses.items():
        assert re.search(rf"^\| {name} \|.* \| {status.replace('_', ' ')} \|$", summary, re.M)
    assert statuses["empty"] == "not_attempted"


def test_class_summary_counts_mistakes(reports: list[SubmissionReport]) -> None:
    text = class_summary(reports)
    assert "| split\\_heads | view\\_no\\_transpose | 1 | heads split with view |" in text
    assert "interleaved\\_heads" in text  # instructors see hidden checks' diagnoses too


@pytest.mark.parametrize(
    ("points", "shown"),
    [(3.0, "3"), (2.5, "2.5"), (0.25, "0.25"), (4.615386, "4.62"), (4.615385, "4.62"),
     (13.846158, "13.85"), (20.000006, "20"), (-1e-9, "0"), (1e-9, "0")],
)  # fmt: skip
def test_points_read_with_at_most_two_decimals(points: float, shown: str) -> None:
    assert num(points) == shown


def thirteenths(*counts: int) -> list[float]:
    """Checks worth `counts` of 13 points, rescaled to 20 as a course's `points` rescales."""
    return [round(c * 20 / 13, 6) for c in counts]


def rescaled_reports() -> list[SubmissionReport]:
    """A problem of 13 points a course rescaled to 20: one submission scored 3 of 13."""
    one, three, seven = thirteenths(1, 3, 7)
    scored = [check(f"check {i}", OK, one) for i in range(3)]
    scored += [check("channels", FAIL, three), check("hidden", FAIL, seven, H)]
    full = [c.model_copy(update={"status": OK, "points": c.max_points}) for c in scored]
    return [
        submission(name, [problem("split_heads", ProblemStatus.graded, checks, 20.000002)], i)
        for i, (name, checks) in enumerate((("some", scored), ("all", full)))
    ]


UNROUNDED = re.compile(r"\d\.\d{3}")


def test_rescaled_points_read_well_everywhere_people_read_them(tmp_path: Path) -> None:
    """At most 2 decimals in every rendering for people; 3 checks of 1.54 make 4.62."""
    reports = rescaled_reports()
    write_summary_csv(reports, tmp_path / "summary.csv")
    console = Console(width=100, record=True)
    print_scores(reports, {"split_heads": 4}, console)
    print_feedback(candidate_view(reports[0]), {}, console)
    html = re.sub(r"<svg.*?</svg>", "", render_html(reports), flags=re.S)
    texts = {
        "csv": (tmp_path / "summary.csv").read_text(),
        "summary": class_summary(reports),
        "feedback": candidate_feedback(candidate_view(reports[0])),
        "terminal": console.export_text(),
        "html": html,
    }
    for name, text in texts.items():
        assert not UNROUNDED.search(text), (name, UNROUNDED.findall(text))
        assert "4.62" in text, name
    assert "some,,,4.62,4.62,20,ok," in texts["csv"]
    assert "4.62/20" in texts["terminal"] and "1.54/1.54" in texts["feedback"]


def test_machine_outputs_keep_rescaled_points_exact() -> None:
    """JUnit properties and Gradescope scores hold the points as graded, not as shown."""
    report = rescaled_reports()[0]
    checks = report.problems[0].checks
    cases = validate_junit(render_junit([report], hostname="localhost")).findall(
        "testsuite/testcase"
    )
    assert [case_property(c, "max_points") for c in cases] == [c.max_points for c in checks]
    results = gradescope_results(report)
    assert results is not None and results["score"] == report.total
    assert [t["max_score"] for t in results["tests"]] == [c.max_points for c in checks]


JUNIT_SUITE = {
    "name",
    "timestamp",
    "hostname",
    "tests",
    "failures",
    "errors",
    "time",
    "package",
    "id",
}
JUNIT_CASE = {"name", "classname", "time"}


def validate_junit(text: str) -> ET.Element:
    """The Ant JUnit schema's required elements and attributes, with consistent counts."""
    root = ET.fromstring(text)
    assert root.tag == "testsuites"
    for index, suite in enumerate(root):
        assert suite.tag == "testsuite"
        assert set(suite.attrib) >= JUNIT_SUITE, JUNIT_SUITE - set(suite.attrib)
        assert suite.get("id") == str(index)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp", ""))
        float(suite.get("time", ""))
        children = [c.tag for c in suite]
        assert children[0] == "properties" and children[-2:] == ["system-out", "system-err"]
        cases = suite.findall("testcase")
        assert children[1:-2] == ["testcase"] * len(cases)
        counted = {"failure": 0, "error": 0, "skipped": 0}
        for case in cases:
            assert set(case.attrib) >= JUNIT_CASE
            float(case.get("time", ""))
            outcomes = [c for c in case if c.tag != "properties"]  # points, as pytest writes them
            assert len(outcomes) <= 1 and [c.tag for c in case][1:] == [o.tag for o in outcomes]
            for outcome in outcomes:
                assert outcome.tag in counted
                if outcome.tag in ("failure", "error"):
                    assert outcome.get("type")
                counted[outcome.tag] += 1
        assert int(suite.get("tests", "")) == len(cases)
        assert int(suite.get("failures", "")) == counted["failure"]
        assert int(suite.get("errors", "")) == counted["error"]
        assert int(suite.get("skipped", "")) == counted["skipped"]
    return root


def case_property(case: ET.Element, name: str) -> float:
    found = case.find(f"properties/property[@name='{name}']")
    assert found is not None, name
    return float(found.get("value", "nan"))


def test_junit_agrees_with_the_score(reports: list[SubmissionReport]) -> None:
    """Points per test case add up to the total; what lost points is a failure, a problem not
    attempted and a check that passed but was zeroed by policy included."""
    zeroed = zeroed_problem(reports[1])
    for report in [*reports, zeroed]:
        root = validate_junit(render_junit([report], hostname="localhost"))
        cases = root.findall("testsuite/testcase")
        points = [case_property(c, "points") for c in cases]
        assert sum(points) == pytest.approx(report.total)
        lost = [c for c, p in zip(cases, points, strict=True) if p < case_property(c, "max_points")]
        assert all(c.find("failure") is not None or c.find("error") is not None for c in lost)


@pytest.mark.parametrize("by", ["submission", "problem"])
def test_junit(reports: list[SubmissionReport], by: str) -> None:
    text = render_junit(reports, by, hostname="localhost")  # type: ignore[arg-type]
    assert_golden(f"junit_by_{by}.xml", text)
    root = validate_junit(text)
    names = [s.get("name") for s in root]
    if by == "submission":
        assert names == ["full", "mistakes", "partial"]
    else:
        assert names == ["split_heads", "causal_self_attention", "mha_by_loop"]
    failures = root.findall(".//failure")
    assert any("heads split with view" in (f.text or "") for f in failures)


def validate_classroom(result: dict[str, Any]) -> None:
    """The fields autograding-grading-reporter reads from a runner's result."""
    assert set(result) == {"version", "status", "max_score", "tests"}
    assert result["version"] == 1 and result["status"] in ("pass", "fail", "error")
    assert isinstance(result["max_score"], NUMBER)
    for test in result["tests"]:
        assert {"name", "status", "score", "message"} <= set(test)
        assert set(test) <= {
            "name",
            "status",
            "score",
            "max_score",
            "message",
            "test_code",
            "filename",
            "line_no",
            "duration",
        }
        assert test["status"] in ("pass", "fail", "error")
        assert isinstance(test["score"], NUMBER) and isinstance(test["name"], str)
        assert isinstance(test["line_no"], int) and isinstance(test["duration"], NUMBER)


def test_classroom(reports: list[SubmissionReport]) -> None:
    for report in reports:
        result = classroom_result(candidate_view(report))
        validate_classroom(result)
        assert sum(t["score"] for t in result["tests"]) == pytest.approx(report.total)
        assert result["max_score"] == (0 if report.grader_fault else report.max_total)
        decoded = json.loads(base64.b64decode(encode_result(result)))
        assert decoded == result
        assert_golden(f"classroom_{report.submission}.json", json.dumps(result, indent=2) + "\n")
    statuses = [classroom_result(candidate_view(r))["status"] for r in reports]
    assert statuses == ["fail", "fail", "error"]


def test_gradescope(reports: list[SubmissionReport]) -> None:
    for report in reports:
        results = gradescope_results(report)
        if report.grader_fault:  # no results.json: Gradescope says the autograder failed
            assert results is None
            continue
        assert results is not None
        validate_gradescope(results)
        assert results["score"] == report.total
        assert_golden(f"gradescope_{report.submission}.json", json.dumps(results, indent=2) + "\n")
    wrong = gradescope_results(reports[1])
    assert wrong is not None
    later = [t for t in wrong["tests"] if "LATER-SECRET" in t["name"]]
    assert [t["visibility"] for t in later] == ["after_due_date"]  # Gradescope holds it back
    hidden = [t["name"] for t in wrong["tests"] if t["visibility"] == "hidden"]
    assert hidden == [  # by their names, for instructors: Gradescope never shows them to students
        f"{p.problem}: {c.name}"
        for p in reports[1].problems
        for c in p.checks
        if c.visibility is Visibility.hidden
    ]
    assert "hidden check" not in json.dumps(wrong)


def test_outputs_and_rereading(reports: list[SubmissionReport], tmp_path: Path) -> None:
    for report in reports:
        write_report(report, tmp_path)
    (tmp_path / "unrelated.json").write_text("{}")
    again = read_reports(tmp_path)
    assert [r.submission for r in again] == ["full", "mistakes", "partial"]
    written = write_outputs(
        again, ["csv", "markdown", "html", "junit", "gradescope"], Options(tmp_path / "out")
    )
    names = {Path(p).relative_to(tmp_path / "out").as_posix() for p in written}
    assert {
        "summary.csv",
        "summary.md",
        "report.html",
        "junit.xml",
        "feedback/mistakes.md",
        "gradescope/mistakes.json",
    } <= names
    assert "gradescope/partial.json" not in names  # a grader fault: no score to record


def test_classroom_writes_runner_files(reports: list[SubmissionReport], tmp_path: Path) -> None:
    output, summary = tmp_path / "output", tmp_path / "summary"
    environ = {"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
    write_outputs(reports[1:2], ["github-classroom"], Options(tmp_path, environ=environ))
    key, _, value = output.read_text().strip().partition("=")
    assert key == "result"
    validate_classroom(json.loads(base64.b64decode(value)))
    assert summary.read_text().startswith("# mistakes: 2/17")
    echoed: list[str] = []
    write_outputs(
        reports[1:2], ["github-classroom"], Options(tmp_path, environ={}, echo=echoed.append)
    )
    assert echoed[0].startswith("result=")
    with pytest.raises(GraderError):
        write_outputs(reports, ["github-classroom"], Options(tmp_path, environ={}))


def test_classroom_log_and_record_agree(reports: list[SubmissionReport]) -> None:
    """The reporter's log weighs tests alike and its record sums their scores: both must give
    the grader's total, for full, partial and zeroed reports; a faulty one posts no points."""
    zeroed = zeroed_problem(reports[1])
    for report in [*reports, zeroed]:
        result = classroom_result(candidate_view(report))
        recorded, possible = recorded_score(result)
        if report.grader_fault:
            assert (recorded, possible) == (0.0, 0.0) and result["status"] == "error"
            continue
        assert possible == report.max_total
        assert recorded == pytest.approx(report.total)
        assert logged_score(result) == pytest.approx(report.total), report.submission


def test_feedback_reads_once(reports: list[SubmissionReport]) -> None:
    """One cause, one message: an import error once for its problem, not once per check; a
    problem zeroed by policy never claims hidden points scored."""
    mistakes = candidate_view(reports[1])
    text = candidate_feedback(mistakes)
    assert text.count("SyntaxError") == 1, text
    assert "hidden check(s) worth 1 point(s): 0 scored" in text  # the zeroed problem's
    console = Console(width=100, record=True)
    print_feedback(mistakes, {}, console)
    assert console.export_text().count("SyntaxError") == 1
