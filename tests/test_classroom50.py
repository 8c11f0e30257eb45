"""Classroom 50: result.json and release-body.md rendered from a report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from grader.errors import GraderError
from grader.outputs import Options, write_outputs
from grader.platforms.classroom50.results import MAX_BODY_CHARS
from grader.reports.models import CheckStatus, ProblemStatus, SubmissionReport
from tests.classroom50_format import validate_classroom50
from tests.reports import check, problem, sample_reports, submission
from tests.test_formats import zeroed_problem
from tests.test_hostile_text import ESCAPES, MESSAGE

REPO = "https://github.com/ml-school/ml-2026-attention-alice"
TAG = "submit/2026-06-01T14-32-05Z-a1b2c3d"
RUNNER = {  # what Classroom 50's runner sets for an autograder
    "CLASSROOM": "ml-2026",
    "ASSIGNMENT": "attention",
    "ASSIGNMENT_TYPE": "individual",
    "SUBMISSION_TAG": TAG,
    "COMMIT_URL": f"{REPO}/commit/a1b2c3d",
    "RELEASE_URL": f"{REPO}/releases/tag/submit%2F2026-06-01T14-32-05Z-a1b2c3d",
    "REVIEW_URL": f"{REPO}/compare/0a0a0a0...a1b2c3d",
    "USERNAME": "alice",
    "OWNER": "alice",
    "PAGES_BASE_URL": "https://ml-school.github.io/classroom50",
    "GITHUB_REPOSITORY": "ml-school/ml-2026-attention-alice",
    "GITHUB_SHA": "a1b2c3d",
    "GITHUB_ACTOR": "alice",
}
Rendered = tuple[dict[str, Any], str, str]  # result.json, release-body.md, $GITHUB_OUTPUT


def rendered(report: SubmissionReport, out: Path, environ: dict[str, str] = RUNNER) -> Rendered:
    output = out / "github_output"
    echoed: list[str] = []
    opts = Options(out, environ={**environ, "GITHUB_OUTPUT": str(output)}, echo=echoed.append)
    write_outputs([report], ["classroom50"], opts)
    result = json.loads((out / "classroom50" / "result.json").read_text(encoding="utf-8"))
    body = (out / "classroom50" / "release-body.md").read_text(encoding="utf-8")
    return result, body, output.read_text(encoding="utf-8") + "".join(echoed)


def test_results_follow_the_published_schema(tmp_path: Path) -> None:
    reports = sample_reports()
    states: list[str] = []
    for report in [*reports, zeroed_problem(reports[1])]:
        result, body, output = rendered(report, tmp_path / f"{len(states)}")
        validate_classroom50(result)
        assert {k: result[k] for k in ("classroom", "assignment", "owner", "submission")} == {
            "classroom": "ml-2026",
            "assignment": "attention",
            "owner": "alice",
            "submission": TAG,
        }
        assert result["max-score"] == report.max_total and result["score"] == report.total
        names = [t["test-name"] for t in result["tests"]]
        assert any("hidden check 1" in n for n in names)
        assert "SECRET" not in json.dumps(result) and "SECRET" not in body
        assert body.startswith(f"### attention-grader: {result['score']}/{result['max-score']}")
        state, summary = output.splitlines()
        states.append(state)
        assert summary.startswith("summary=attention-grader: ")
    assert states == [
        "status=failure",  # full marks on two problems, a third not attempted
        "status=failure",
        "status=error",  # a grader fault
        "status=failure",
    ]


def test_a_forbidden_api_fails_the_checks_it_zeroed(tmp_path: Path) -> None:
    result, _, _ = rendered(sample_reports()[1], tmp_path)
    zeroed = [t for t in result["tests"] if t["test-name"].startswith("2.")]
    assert zeroed and not any(t["passed"] or t["score"] for t in zeroed)


def test_points_that_are_not_whole_count_in_parts(tmp_path: Path) -> None:
    checks = [check("a", CheckStatus.passed, 0.5), check("b", CheckStatus.failed, 1.25)]
    report = submission("parts", [problem("split_heads", ProblemStatus.graded, checks, 1.75)], 1)
    result, body, output = rendered(report, tmp_path)
    validate_classroom50(result)
    assert (result["score"], result["max-score"]) == (2, 7)  # quarter points
    assert "4 parts make one point" in body
    assert "status=failure" in output


def test_names_are_cut_to_100_bytes_without_colliding(tmp_path: Path) -> None:
    stem = "é\x1b[2J\t\n" * 60
    checks = [check(f"{stem}{i}", CheckStatus.passed, 1) for i in range(12)]
    report = submission("long", [problem("split_heads", ProblemStatus.graded, checks, 12)], 1)
    result, _, output = rendered(report, tmp_path)
    validate_classroom50(result)  # distinct, at most 100 bytes, no control character
    assert all(t["test-name"].endswith("…") for t in result["tests"])
    assert "status=success" in output


def test_hostile_text_stays_text_in_the_release(tmp_path: Path) -> None:
    hostile = MESSAGE + " @octocat https://evil.example/x " + "x" * 300_000
    checks = [check("matches", CheckStatus.failed, 3, message=hostile)]
    solved = problem("split_heads", ProblemStatus.crashed, checks, 3, hostile)
    report = submission(MESSAGE, [solved], 1, hostile)
    result, body, output = rendered(report, tmp_path, {**RUNNER, "OWNER": "alice\nstatus=x"})
    validate_classroom50(result)
    assert len(body) <= MAX_BODY_CHARS + 100 and body.endswith("than a Release can show.)\n")
    assert "<script>" not in body and "\n# Heading" not in body and "**bold**" not in body
    assert "@octocat" not in body and "https://evil" not in body
    assert not any(c in body for c in ESCAPES)
    assert len(output.splitlines()) == 2  # status= and summary=, whatever the candidate wrote


def test_outside_the_runner_the_identity_is_a_placeholder(tmp_path: Path) -> None:
    result, _, output = rendered(sample_reports()[0], tmp_path, {})
    validate_classroom50(result)
    assert result["submission"] == "submit/unknown" and result["owner"] == "unknown"
    assert "CLASSROOM, ASSIGNMENT, SUBMISSION_TAG, COMMIT_URL, RELEASE_URL, OWNER unset" in output
    with pytest.raises(GraderError, match="exactly one submission"):
        write_outputs(sample_reports(), ["classroom50"], Options(tmp_path, environ={}))
