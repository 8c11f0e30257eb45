"""Classroom 50: the `result.json` and `release-body.md` an autograder leaves in the checkout.

`result.json` follows `classroom50/result/v1`: the submission's identity (from the runner's
environment: `CLASSROOM`, `ASSIGNMENT`, `SUBMISSION_TAG`, `COMMIT_URL`, `RELEASE_URL`,
`REVIEW_URL`, `OWNER`, `ASSIGNMENT_TYPE`), `score` and `max-score`, and a test per check with
whole-number points (`score`, `max-score`) and a `test-name` of at most 100 UTF-8 bytes
without control characters. A course whose points are not whole numbers is counted in parts of
a point (a 0.5-point check is 1 of 2 parts), so the tests still sum to the total. The Release
shows `release-body.md` to the candidate: their view of the report, as Markdown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timezone
from fractions import Fraction
from typing import Any

from grader.reports.markdown import candidate_feedback
from grader.reports.models import CheckStatus, SubmissionReport
from grader.reports.safe import markdown
from grader.reports.tests import FlatTest, flat_tests

SCHEMA = "classroom50/result/v1"
MAX_NAME_BYTES = 100
MAX_BODY_CHARS = 100_000  # GitHub refuses a Release text over 125,000 characters
CUT = "…"
UNSET = "unknown"  # an identity field the runner did not set: a local preview
ASSIGNMENT_TYPES = ("individual", "group")
NOT_NAME = re.compile(r"\s+")  # tab and newline, in a test's name
REQUIRED = ("CLASSROOM", "ASSIGNMENT", "SUBMISSION_TAG", "COMMIT_URL", "RELEASE_URL")


def unset(environ: Mapping[str, str]) -> list[str]:
    """The runner's variables an identity needs that `environ` lacks."""
    owner = [] if environ.get("OWNER") or environ.get("USERNAME") else ["OWNER"]
    return [name for name in REQUIRED if not environ.get(name)] + owner


@dataclass(frozen=True)
class Identity:
    """Which submission a result is for, as the runner's environment names it."""

    classroom: str
    assignment: str
    assignment_type: str
    owner: str
    submission: str
    commit: str
    release: str
    review: str

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> Identity:
        """From the runner's variables; `unknown` (and `submit/unknown`) where one is unset."""

        def get(*names: str) -> str:
            return next((environ[n] for n in names if environ.get(n)), UNSET)

        kind = environ.get("ASSIGNMENT_TYPE", "")
        commit = get("COMMIT_URL")
        tag = get("SUBMISSION_TAG")
        return cls(
            classroom=get("CLASSROOM"),
            assignment=get("ASSIGNMENT"),
            assignment_type=kind if kind in ASSIGNMENT_TYPES else ASSIGNMENT_TYPES[0],
            owner=get("OWNER", "USERNAME"),
            submission=tag if tag.startswith("submit/") else f"submit/{tag}",
            commit=commit,
            release=get("RELEASE_URL"),
            review=environ.get("REVIEW_URL") or commit,
        )


def parts_per_point(tests: list[FlatTest]) -> int:
    """The smallest number of parts a point is counted in for every test's worth to be whole."""
    worths = [Fraction(t.max_score).limit_denominator(1000) for t in tests]
    return math.lcm(1, *(w.denominator for w in worths))


def check_name(test: FlatTest) -> str:
    """`<number> <problem>: <check>` on one line, cut to 100 UTF-8 bytes: the leading number
    keeps every name distinct, cut or not."""
    name = NOT_NAME.sub(" ", f"{test.number} {test.name}").strip()
    encoded = name.encode()
    if len(encoded) <= MAX_NAME_BYTES:
        return name
    room = MAX_NAME_BYTES - len(CUT.encode())
    return encoded[:room].decode(errors="ignore").rstrip() + CUT


def result_tests(view: SubmissionReport) -> list[dict[str, Any]]:
    """One test per check of the candidate's view, in parts of a point, passed where it scored
    (a forbidden API zeroes a problem's passed checks)."""
    flat = list(flat_tests(view))
    parts = parts_per_point(flat)
    tests = []
    for test in flat:
        worth, score = round(test.max_score * parts), round(test.score * parts)
        tests.append(
            {
                "test-name": check_name(test),
                "passed": test.status is CheckStatus.passed and score == worth,
                "score": min(worth, score),
                "max-score": worth,
            }
        )
    return tests


def classroom50_result(view: SubmissionReport, identity: Identity) -> dict[str, Any]:
    """`result.json` for a candidate's (redacted) view of a report."""
    tests = result_tests(view)
    return {
        "schema": SCHEMA,
        "classroom": identity.classroom,
        "assignment": identity.assignment,
        "assignment_type": identity.assignment_type,
        "owner": identity.owner,
        "submission": identity.submission,
        "commit": identity.commit,
        "release": identity.release,
        "review": identity.review,
        "datetime": view.run.started_at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "score": sum(t["score"] for t in tests),
        "max-score": sum(t["max-score"] for t in tests),
        "tests": tests,
    }


def status(view: SubmissionReport, result: dict[str, Any]) -> tuple[str, str]:
    """The commit status and its one-line summary: `error` when the grader failed."""
    tests = result["tests"]
    passed = sum(t["passed"] for t in tests)
    summary = (
        f"attention-grader: {result['score']}/{result['max-score']} "
        f"({passed}/{len(tests)} checks passed)"
    )
    if view.grader_fault:
        return "error", f"{summary}; the grader failed: see the job's log"
    return ("success" if passed == len(tests) else "failure"), summary


def release_body(view: SubmissionReport, result: dict[str, Any]) -> str:
    """The Release's text: the score, how the code ran and the candidate's feedback."""
    parts = parts_per_point(list(flat_tests(view)))
    lines = [f"### attention-grader: {result['score']}/{result['max-score']}", ""]
    if parts > 1:
        lines += [f"Points are counted in parts: {parts} parts make one point.", ""]
    runs_as = view.run.environment.get("runs_as")
    if runs_as:
        lines += [ran_as(runs_as.split(" (")[0]), ""]
    body = "\n".join(lines) + "\n" + candidate_feedback(view)
    if len(body) <= MAX_BODY_CHARS:
        return body
    cut = body[:MAX_BODY_CHARS].rsplit("\n", 1)[0]
    return f"{cut}\n\n(The feedback is cut here: it is longer than a Release can show.)\n"


def ran_as(account: str) -> str:
    """How the candidate's code ran: as the job's own user (no sandbox), or as an account of
    its own, apart from the grader (the local backend's `runs_as`, without its rlimits)."""
    if account == "the grader's":
        return "Your code ran as this job's own user, with limits on its time and memory."
    return (
        f"Your code ran as the account {markdown(account)}, with limits on its time and memory, "
        "apart from the grader."
    )


def output_lines(view: SubmissionReport, result: dict[str, Any]) -> str:
    """`status=` and `summary=` for `$GITHUB_OUTPUT` (the summary holds no candidate text)."""
    state, summary = status(view, result)
    return f"status={state}\nsummary={summary}\n"
