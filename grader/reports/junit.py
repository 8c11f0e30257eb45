"""JUnit XML for CI dashboards: one testsuite per submission (or per problem), one testcase
per check. Follows the Ant JUnit schema: every required attribute and element is written."""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Literal

from grader.reports.models import (
    CheckReport,
    CheckStatus,
    ProblemReport,
    ProblemStatus,
    SubmissionReport,
)
from grader.reports.safe import plain
from grader.reports.text import check_details, problem_note, scored

SuiteBy = Literal["submission", "problem"]


def render_junit(
    reports: list[SubmissionReport], by: SuiteBy = "submission", hostname: str | None = None
) -> str:
    host = hostname or socket.gethostname() or "localhost"
    root = ET.Element("testsuites")
    suites = by_submission(reports) if by == "submission" else by_problem(reports)
    for index, (name, started, cases) in enumerate(suites):
        suite = ET.SubElement(
            root,
            "testsuite",
            name=name,
            package=name,
            id=str(index),
            timestamp=started,
            hostname=host,
        )
        ET.SubElement(suite, "properties")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        total = 0.0
        for submission, problem, case in cases:
            counts["tests"] += 1
            kind = add_case(suite, submission, problem, case)
            if kind:
                counts[kind] += 1
            total += case_time(problem, case)
        suite.attrib.update({k: str(v) for k, v in counts.items()}, time=f"{total:.3f}")
        ET.SubElement(suite, "system-out")
        ET.SubElement(suite, "system-err")
    scrub(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def scrub(root: ET.Element) -> None:
    """Every text and attribute legal XML, whatever bytes a candidate put in them."""
    for element in root.iter():
        if element.text:
            element.text = plain(element.text)
        for key, value in element.attrib.items():
            element.attrib[key] = plain(value)


Case = tuple[SubmissionReport, ProblemReport, CheckReport | None]


def by_submission(reports: list[SubmissionReport]) -> Iterator[tuple[str, str, list[Case]]]:
    for report in reports:
        yield report.submission, timestamp(report), list(cases_of(report, report.problems))


def by_problem(reports: list[SubmissionReport]) -> Iterator[tuple[str, str, list[Case]]]:
    order: dict[str, list[Case]] = {}
    for report in reports:
        for problem in report.problems:
            order.setdefault(problem.problem, []).extend(cases_of(report, [problem]))
    started = min((timestamp(r) for r in reports), default="1970-01-01T00:00:00")
    for name, cases in order.items():
        yield name, started, cases


def cases_of(report: SubmissionReport, problems: list[ProblemReport]) -> Iterator[Case]:
    """A testcase per check; a problem without checks (not attempted) is one testcase."""
    for problem in problems:
        if not problem.checks:
            yield report, problem, None
        for check in problem.checks:
            yield report, problem, check


def timestamp(report: SubmissionReport) -> str:
    """The schema's timestamp: ISO 8601 without a time zone (UTC here)."""
    return report.run.started_at.strftime("%Y-%m-%dT%H:%M:%S")


def case_time(problem: ProblemReport, check: CheckReport | None) -> float:
    """The problem's time, spread evenly over its checks (checks are not timed one by one)."""
    if problem.seconds is None:
        return 0.0
    return problem.seconds / max(1, len(problem.checks)) if check else problem.seconds


def exact(points: float) -> str:
    """Points for a machine to read: as held, less a float's noise (4.615386, 3)."""
    return f"{points:.15g}"


def add_case(
    suite: ET.Element, report: SubmissionReport, problem: ProblemReport, check: CheckReport | None
) -> str | None:
    """Append one testcase with its points as properties; return which counter it adds to
    (None when it passed). A problem not attempted and a check whose points a policy zeroed
    are failures, so that a dashboard agrees with the score."""
    name = check.name if check else problem.problem
    case = ET.SubElement(
        suite,
        "testcase",
        name=name,
        classname=f"{report.submission}.{problem.problem}",
        time=f"{case_time(problem, check):.3f}",
    )
    zeroed = problem.status.zeroes
    points = scored(problem, check) if check else problem.score
    worth = check.max_points if check else problem.max_score
    properties = ET.SubElement(case, "properties")
    for key, value in (("points", points), ("max_points", worth)):
        ET.SubElement(properties, "property", name=key, value=exact(value))
    if check is None:
        kind = "error" if problem.status is ProblemStatus.grader_error else "failure"
        element = ET.SubElement(
            case, kind, message=problem_note(problem), type=problem.status.value
        )
        element.text = problem.message
        return "errors" if kind == "error" else "failures"
    if check.status is CheckStatus.passed and not zeroed:
        return None
    if check.status is CheckStatus.skipped:
        ET.SubElement(case, "skipped", message=check.message)
        return "skipped"
    kind = "error" if check.status is CheckStatus.error else "failure"
    details = "\n".join(check_details(check))
    message = check.message or details
    if check.status is CheckStatus.passed:  # passed, but the problem's policy zeroed it
        message = problem_note(problem)
    element = ET.SubElement(case, kind, message=message, type=check.check)
    element.text = details
    return "failures" if kind == "failure" else "errors"
