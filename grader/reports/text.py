"""Short texts every renderer shares: numbers, a check's details, a problem's note."""

from __future__ import annotations

import re

from grader.reports.models import CheckReport, CheckStatus, ProblemReport, ProblemStatus


def num(value: float) -> str:
    """Points as people read them, everywhere they do: at most 2 decimals, trailing zeros
    dropped (3, 2.5, 4.62). A sum is its exact value rounded so, within a cent or so of the
    sum of its parts as shown."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def fraction(score: float, max_score: float) -> str:
    return f"{num(score)}/{num(max_score)}"


def check_details(check: CheckReport) -> list[str]:
    """What went wrong on a check: the named mistake and the largest error, or its message."""
    diagnosis = check.diagnosis
    if diagnosis is None:
        return [check.message] if check.message else []
    lines = []
    if diagnosis.description:
        lines.append(f"named mistake: {diagnosis.description}")
    if diagnosis.max_error is not None:
        where = f" at {diagnosis.where}" if diagnosis.where else ""
        config = f" (with {diagnosis.config})" if diagnosis.config else ""
        lines.append(f"max error {diagnosis.max_error:.3g}{where}{config}")
    elif check.message:
        lines.insert(0, check.message)
    return lines


def scored(problem: ProblemReport, check: CheckReport) -> float:
    """What the check scores: 0 in a problem that scores 0 whatever its checks found
    (`ProblemStatus.zeroes`), in a report saved before such checks were zeroed too."""
    return 0.0 if problem.status.zeroes else check.points


def zeroed_pass(problem: ProblemReport, check: CheckReport) -> bool:
    """Whether the check passed in a problem that scores 0 whatever its checks found."""
    return check.status is CheckStatus.passed and problem.status.zeroes


def zeroed_note(problem: ProblemReport) -> str:
    """What a check that passed says in a problem that scores 0."""
    return f"passed, but scores 0: {problem.status.text}"


def problem_note(problem: ProblemReport) -> str:
    """The problem's status and message when it was not simply graded."""
    if problem.status is ProblemStatus.graded:
        return problem.message
    text = problem.status.text
    return f"{text}: {problem.message}" if problem.message else text


PLAIN_ABSENCE = re.compile(r"no \S+ in the submission")
FIXABLE = "?"  # beside `-` (not attempted): something like the problem's file was found


def fixable(problem: ProblemReport) -> bool:
    """Whether a problem scores 0 as not attempted where the grader found something of it (a
    near miss to rename, a limit that left it out): a zero its candidate may fix, which an
    instructor should see as such, not as an empty folder."""
    return (
        problem.status is ProblemStatus.not_attempted
        and bool(problem.message)
        and not PLAIN_ABSENCE.fullmatch(problem.message)
    )


def absence_notes(problems: list[ProblemReport]) -> list[str]:
    """What the grader found of each problem not attempted, where it says more than that the
    file is not there (`fixable`)."""
    return [f"{p.problem}: {p.message}" for p in problems if fixable(p)]


def details_once(problem: ProblemReport, checks: list[CheckReport]) -> list[list[str]]:
    """Each check's details, less what the problem's note or an earlier check already said:
    one cause, one message (an import error is told once, not once per check). A check that
    passed in a problem that scores 0 says so."""
    said = [problem_note(problem)]
    shown = []
    for check in checks:
        if zeroed_pass(problem, check):
            shown.append([zeroed_note(problem)])
            continue
        lines = [
            line
            for line in check_details(check)
            if check.status is not CheckStatus.passed and not any(line in s for s in said)
        ]
        said += lines
        shown.append(lines)
    return shown
