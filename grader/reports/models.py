"""The score report: pydantic models every output format is rendered from.

Field names at the top, problem and check level are a contract relied on by other tools.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from grader.compat import StrEnum
from grader.names import report_file
from grader.sandboxing.backends.base import Isolation
from grader.specs.problem import Visibility
from grader.strict import Strict

SCHEMA_VERSION = 1


class CheckStatus(StrEnum):
    """A check's outcome; `mark` is its symbol in every rendering."""

    passed = "passed"
    failed = "failed"
    error = "error"  # the candidate's code raised, crashed or timed out on this check
    skipped = "skipped"

    @property
    def mark(self) -> str:
        return CHECK_MARKS[self]


class ProblemStatus(StrEnum):
    """A problem's outcome; `text` is its name in every rendering, `short` in a score cell."""

    graded = "graded"
    not_attempted = "not_attempted"
    import_error = "import_error"
    timeout = "timeout"
    crashed = "crashed"
    forbidden_api = "forbidden_api"
    grader_error = "grader_error"  # our fault: never scored as the candidate's zero

    @property
    def text(self) -> str:
        return PROBLEM_TEXTS[self][0]

    @property
    def short(self) -> str:
        return PROBLEM_TEXTS[self][1]

    @property
    def failed(self) -> bool:
        """Neither graded nor not attempted: the run failed, the grader did, or a forbidden API
        zeroed the problem (a score table stars such a score)."""
        return self not in (ProblemStatus.graded, ProblemStatus.not_attempted)

    @property
    def zeroes(self) -> bool:
        """The problem scores 0 whatever its checks found: a forbidden API, or the grader's
        fault (then never the candidate's zero: every output says the grader failed)."""
        return self in (ProblemStatus.forbidden_api, ProblemStatus.grader_error)


CHECK_MARKS = {
    CheckStatus.passed: "✔",
    CheckStatus.failed: "✘",
    CheckStatus.error: "!",
    CheckStatus.skipped: "–",
}
PROBLEM_TEXTS = {  # the name, and the word a score table's cell has room for
    ProblemStatus.graded: ("graded", "graded"),
    ProblemStatus.not_attempted: ("not attempted", "-"),
    ProblemStatus.import_error: ("import error", "import error"),
    ProblemStatus.timeout: ("timed out", "timeout"),
    ProblemStatus.crashed: ("crashed", "crashed"),
    ProblemStatus.forbidden_api: ("forbidden API used", "forbidden"),
    ProblemStatus.grader_error: ("grader error", "grader error"),
}


class Diagnosis(Strict):
    """What the grader could say about a wrong value: the known mistake it matches and where."""

    mistake: str | None = Field(None, description="Id of the known mistake the output matches.")
    description: str | None = None
    config: str | None = Field(
        None, description="The probe config where it was seen, by its values."
    )
    max_error: float | None = None
    where: str | None = Field(None, description="Where the largest error is (batch, head, token).")


Grid = list[list[float | None]]  # queries x keys; None where the value is not finite


class AttentionPattern(Strict):
    """What a failing check shows of the module's attention, beside the reference's: per head,
    queries down, keys across."""

    kind: Literal["weights", "influence"] = Field(
        description="weights: the attention weights the module returned; influence: how much "
        "each output token moves when one input token is changed, measured in the sandbox "
        "(one map: heads are not visible from outside the module)."
    )
    config: str = Field(description="The configuration it was measured on, by its values.")
    got: list[Grid] = Field(description="The candidate's module, one grid per head shown.")
    expected: list[Grid] = Field(description="The reference on the same input.")


class CheckReport(Strict):
    name: str
    check: str = Field(description="The library check this is an instance of.")
    status: CheckStatus
    points: float
    max_points: float
    visibility: Visibility
    message: str = ""
    public_message: str | None = Field(
        None,
        description="What a candidate-facing view shows instead of message, when message "
        "carries text the candidate's code chose (an exception's message, a repr).",
    )
    diagnosis: Diagnosis | None = None
    pattern: AttentionPattern | None = Field(
        None, description="The attention the check saw, where it is about attention."
    )


class ProblemReport(Strict):
    problem: str
    title: str = ""
    status: ProblemStatus
    score: float
    max_score: float
    checks: list[CheckReport] = Field(default_factory=list)
    message: str = ""
    public_message: str | None = Field(
        None, description="What a candidate-facing view shows instead of message, as for checks."
    )
    seconds: float | None = None
    stdout: str = Field("", description="The candidate code's output (instructors only).")
    stderr: str = ""


class RunInfo(Strict):
    """How the grade was produced: enough to reproduce it."""

    grader_version: str
    seed: int
    backend: str
    environment: dict[str, str] = Field(default_factory=dict)
    isolation: Isolation | None = Field(
        None,
        description="Where the submission ran: a container of its own; a warm worker's "
        "container, in processes forked for it and cleaned up after; or a local process.",
    )
    started_at: datetime
    seconds: float | None = None


class Student(Strict):
    """Who handed the submission in, as the class export names them."""

    id: str = Field(
        description="The export's id: the zip's name, Gradescope's sid or email, "
        "the GitHub username; a group's joined with '; '."
    )
    name: str = ""


class SubmissionReport(Strict):
    schema_version: int = SCHEMA_VERSION
    submission: str
    student: Student | None = None
    total: float
    max_total: float
    problems: list[ProblemReport]
    content_hash: str = ""
    run: RunInfo
    message: str = ""

    @property
    def grader_fault(self) -> bool:
        return any(p.status is ProblemStatus.grader_error for p in self.problems)

    def problem(self, problem_id: str) -> ProblemReport:
        for p in self.problems:
            if p.problem == problem_id:
                return p
        raise KeyError(problem_id)


def json_schema() -> dict[str, Any]:
    """The published JSON schema of a submission report."""
    return SubmissionReport.model_json_schema()


def write_report(report: SubmissionReport, out_dir: Path) -> Path:
    """Save the report in `out_dir`, under a name of the grader's (`grader.names`)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / report_file(report.submission)
    path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path


def read_report(path: Path) -> SubmissionReport:
    return SubmissionReport.model_validate(json.loads(path.read_text(encoding="utf-8")))
