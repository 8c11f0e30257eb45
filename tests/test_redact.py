"""No hidden check's name, message or diagnosis reaches a candidate-facing output."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from rich.console import Console

from grader.outputs import Options, write_outputs
from grader.platforms.classroom.results import classroom_result, encode_result
from grader.platforms.gradescope.results import gradescope_results
from grader.reports.markdown import candidate_feedback
from grader.reports.models import SubmissionReport
from grader.reports.redact import candidate_view
from grader.reports.terminal import print_feedback
from grader.specs.course import Course, CourseError, load_course, reveal_after_due
from tests.reports import sample_reports


def gradescope_for_students(report: SubmissionReport, reveal: bool) -> str:
    """What Gradescope shows a student of `results.json`: the summary and the tests their
    visibility lets through (`after_due_date` ones once the due date passed); nothing after a
    grader fault (no results.json)."""
    results = gradescope_results(report)
    if results is None:
        return ""
    shown = {"visible", "after_due_date"} if reveal else {"visible"}
    tests = [t for t in results["tests"] if t["visibility"] in shown]
    return json.dumps({"output": results["output"], "score": results["score"], "tests": tests})


def candidate_outputs(report: SubmissionReport, reveal: bool, tmp_path: Path) -> dict[str, str]:
    """Every candidate-facing rendering of one report."""
    view = candidate_view(report, reveal)
    console = Console(record=True, width=200)
    print_feedback(view, {}, console)
    output, summary = tmp_path / "output", tmp_path / "summary"
    output.write_text("")
    summary.write_text("")
    write_outputs(
        [report],
        ["github-classroom", "markdown"],
        Options(
            tmp_path / "out",
            reveal,
            environ={"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)},
        ),
    )
    encoded = output.read_text().strip().removeprefix("result=")
    return {
        "check": console.export_text(),
        "markdown": candidate_feedback(view),
        "classroom": json.dumps(classroom_result(view)),
        "classroom output": base64.b64decode(encoded).decode(),
        "step summary": summary.read_text(),
        "feedback file": (tmp_path / "out" / "feedback" / f"{report.submission}.md").read_text(),
        "gradescope": gradescope_for_students(report, reveal),
        "view": candidate_view(report, reveal).model_dump_json(),
        "encoded": base64.b64decode(encode_result(classroom_result(view))).decode(),
    }


@pytest.mark.parametrize("reveal", [False, True])
@pytest.mark.parametrize("index", [0, 1, 2])
def test_hidden_checks_never_reach_candidates(index: int, reveal: bool, tmp_path: Path) -> None:
    report = sample_reports()[index]
    assert "HIDDEN-SECRET" in report.model_dump_json()
    for name, text in candidate_outputs(report, reveal, tmp_path).items():
        assert "HIDDEN-SECRET" not in text, name
        assert "interleaved_heads" not in text, name
        if not reveal:
            assert "LATER-SECRET" not in text, name


def test_after_due_date_checks_are_revealed(tmp_path: Path) -> None:
    wrong = sample_reports()[1]
    outputs = candidate_outputs(wrong, True, tmp_path)
    for name in ("check", "markdown", "classroom", "step summary", "gradescope"):
        assert "LATER-SECRET" in outputs[name], name


@pytest.mark.parametrize("index", [0, 1])
def test_gradescope_holds_hidden_checks_back_by_visibility(index: int) -> None:
    """Hidden checks reach Gradescope in full, for instructors, marked for it to hide."""
    results = gradescope_results(sample_reports()[index])
    assert results is not None
    assert "HIDDEN-SECRET" not in results["output"]
    for test in results["tests"]:
        if "HIDDEN-SECRET" in json.dumps(test):
            assert test["visibility"] == "hidden", test["name"]


def test_view_keeps_points_and_leaves_the_report_alone() -> None:
    report = sample_reports()[1]
    before = report.model_dump_json()
    view = candidate_view(report)
    assert report.model_dump_json() == before
    assert view.total == report.total
    for mine, theirs in zip(view.problems, report.problems, strict=True):
        assert [c.points for c in mine.checks] == [c.points for c in theirs.checks]
        assert mine.stdout == ""


def test_course_due_date(tmp_path: Path) -> None:
    path = tmp_path / "course.toml"
    path.write_text('name = "attention"\ndue = 2026-12-01T23:59:00Z\n')
    course = load_course(path)
    before = datetime(2026, 12, 1, tzinfo=timezone.utc)
    after = datetime(2026, 12, 2, tzinfo=timezone.utc)
    assert not reveal_after_due(False, course, before)
    assert reveal_after_due(False, course, after)
    assert reveal_after_due(True, None, before)
    assert not Course().past_due(after)
    path.write_text("due = 2026-12-01T23:59:00\n")
    with pytest.raises(CourseError, match="time zone"):
        load_course(path)
