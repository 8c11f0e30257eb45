"""What `gradescope run` prints: a short summary for instructors, which Gradescope shows them as
the autograder's output (never to students, `stdout_visibility: hidden`): the score, each
problem's status with what failed, the notes, and where the full report and results.json are.
"""

from __future__ import annotations

from pathlib import Path

from grader.reports.models import CheckStatus, ProblemStatus, SubmissionReport
from grader.reports.safe import plain
from grader.reports.text import absence_notes, fraction, problem_note

MAX_LINE = 160  # characters of a message shown; the full report has all of it
WIDTH = 26  # of a problem's id in its line


def cut(text: str) -> str:
    line = " ".join(plain(text).split())
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 3] + "..."


def instructor_summary(report: SubmissionReport, results: Path | None, full: Path) -> str:
    """The summary of `report`; `results`: the results.json written (None after a grader
    fault), `full`: the JSON report's path."""
    lines = [f"score {fraction(report.total, report.max_total)} (seed {report.run.seed})"]
    if report.message:
        lines.append(f"note: {cut(report.message)}")
    for problem in report.problems:
        if problem.status is ProblemStatus.not_attempted:
            continue
        score = fraction(problem.score, problem.max_score)
        note = "" if problem.status is ProblemStatus.graded else f"  {cut(problem_note(problem))}"
        lines.append(f"  {problem.problem:<{WIDTH}} {score:>7}{note}")
        said = {problem.message}
        for check in problem.checks:
            wrong = check.status in (CheckStatus.failed, CheckStatus.error)
            if wrong and check.message not in said:  # a cause told once, not once per check
                said.add(check.message)
                lines.append(f"      {check.status.mark} {cut(check.name)}: {cut(check.message)}")
    skipped = [p.problem for p in report.problems if p.status is ProblemStatus.not_attempted]
    if skipped:
        lines.append(f"not attempted: {', '.join(skipped)}")
        lines += [f"  {cut(note)}" for note in absence_notes(report.problems)]
    lines.append(f"full report (JSON): {full}")
    if results is None:
        lines.append("results.json: none written (a grader error: Gradescope records no score)")
    else:
        lines.append(f"results.json: {results}")
    return "\n".join(lines)
