"""A fixed batch of reports (no grading) that every renderer's tests use.

Strings containing HIDDEN-SECRET belong to hidden checks and LATER-SECRET to `after_due_date`
checks: candidate-facing outputs must never show the first, nor the second before the reveal.
"""

from __future__ import annotations

from datetime import datetime, timezone

from grader.reports.models import (
    CheckReport,
    CheckStatus,
    Diagnosis,
    ProblemReport,
    ProblemStatus,
    RunInfo,
    Student,
    SubmissionReport,
)
from grader.specs.problem import Visibility

V, H, L = Visibility.visible, Visibility.hidden, Visibility.after_due_date
OK, FAIL, ERR = CheckStatus.passed, CheckStatus.failed, CheckStatus.error


def check(
    name: str,
    status: CheckStatus,
    points: float,
    visibility: Visibility = V,
    message: str = "",
    diagnosis: Diagnosis | None = None,
) -> CheckReport:
    return CheckReport(
        name=name,
        check="allclose",
        status=status,
        points=points if status is OK else 0.0,
        max_points=points,
        visibility=visibility,
        message=message,
        diagnosis=diagnosis,
    )


def problem(
    problem_id: str,
    status: ProblemStatus,
    checks: list[CheckReport],
    max_score: float,
    message: str = "",
    **extra: object,
) -> ProblemReport:
    if status.zeroes:  # as the judge reports it: every check scores 0
        checks = [c.model_copy(update={"points": 0.0}) for c in checks]
    return ProblemReport(
        problem=problem_id,
        title=f"The {problem_id} problem",
        status=status,
        score=sum(c.points for c in checks),
        max_score=max_score,
        checks=checks,
        message=message,
        seconds=1.5 if checks else None,
        **extra,
    )


def split_heads(wrong: bool) -> ProblemReport:
    diagnosis = Diagnosis(
        mistake="view_no_transpose",
        description="heads split with view",
        config="s3",
        max_error=3.5,
        where="batch 1, head 0, token 2",
    )
    secret = Diagnosis(
        mistake="interleaved_heads",
        description="HIDDEN-SECRET diagnosis",
        config="s8",
        max_error=1.25,
        where="HIDDEN-SECRET where",
    )
    checks = [
        check("split_heads returns (B, nh, T, hd)", OK, 1, message="3 configs agree"),
        check(
            "split_heads puts the right channels in each head",
            FAIL if wrong else OK,
            3,
            message="output differs | max error 3.5" if wrong else "2 configs agree",
            diagnosis=diagnosis if wrong else None,
        ),
        check(
            "HIDDEN-SECRET: more head counts",
            FAIL if wrong else OK,
            1,
            H,
            message="HIDDEN-SECRET message",
            diagnosis=secret if wrong else None,
        ),
        check("LATER-SECRET: float64", FAIL if wrong else OK, 2, L, message="LATER-SECRET message"),
        check("no forbidden API", OK, 1, message="no forbidden API"),
    ]
    return problem("split_heads", ProblemStatus.graded, checks, 8)


def causal(status: ProblemStatus) -> ProblemReport:
    message = (
        "the problem scores 0 (see its forbidden API check)"
        if status is ProblemStatus.forbidden_api
        else ""
    )
    checks = [
        check("output shape (B, T, C)", OK, 1, message="2 configs agree"),
        check("causal: no token sees the future", OK, 2, message="ok"),
        check("HIDDEN-SECRET: dropout off in eval", OK, 1, H, message="HIDDEN-SECRET ok"),
        check(
            "no forbidden API",
            FAIL if status is ProblemStatus.forbidden_api else OK,
            1,
            message="uses scaled_dot_product_attention"
            if status is ProblemStatus.forbidden_api
            else "no forbidden API",
        ),
    ]
    return problem(
        "causal_self_attention",
        status,
        checks,
        5,
        message,
        stdout="HIDDEN-SECRET stdout",
        stderr="",
    )


def not_attempted(problem_id: str, max_score: float) -> ProblemReport:
    return ProblemReport(
        problem=problem_id,
        title=f"The {problem_id} problem",
        status=ProblemStatus.not_attempted,
        score=0,
        max_score=max_score,
        message=f"no {problem_id}.py in the submission",
        stdout="",
    )


def submission(
    name: str,
    problems: list[ProblemReport],
    minute: int,
    message: str = "",
    student: Student | None = None,
) -> SubmissionReport:
    return SubmissionReport(
        submission=name,
        student=student,
        total=sum(p.score for p in problems),
        max_total=sum(p.max_score for p in problems),
        problems=problems,
        content_hash=f"{minute:02d}" * 32,
        message=message,
        run=RunInfo(
            grader_version="0.1.0",
            seed=7,
            backend="local",
            environment={"backend": "local", "torch_version": "2.13.0"},
            started_at=datetime(2026, 3, 1, 12, minute, tzinfo=timezone.utc),
            seconds=4.2,
        ),
    )


IMPORT_ERROR = "importing mha_by_loop.py raised SyntaxError: line 3"


def sample_reports() -> list[SubmissionReport]:
    errored = ProblemReport(
        problem="mha_by_loop",
        title="The mha_by_loop problem",
        status=ProblemStatus.grader_error,
        score=0,
        max_score=4,
        message="check 'HIDDEN-SECRET loop' failed: KeyError\nTraceback ...",
        stdout="",
    )
    imported = ProblemReport(
        problem="mha_by_loop",
        title="The mha_by_loop problem",
        status=ProblemStatus.import_error,
        score=0,
        max_score=4,
        message=IMPORT_ERROR,
        checks=[
            check("returns (B, T, C)", ERR, 2, message=IMPORT_ERROR),
            check("HIDDEN-SECRET loops", ERR, 2, H, message=IMPORT_ERROR),
        ],
        stdout="",
    )
    return [
        submission(
            "full",
            [split_heads(False), causal(ProblemStatus.graded), not_attempted("mha_by_loop", 4)],
            0,
            student=Student(id="1815", name="Ada Lovelace"),
        ),
        submission(
            "mistakes",
            [split_heads(True), causal(ProblemStatus.forbidden_api), imported],
            1,
            "notes.py: not a regular file (links are not followed)",
        ),
        submission(
            "partial",
            [not_attempted("split_heads", 8), causal(ProblemStatus.graded), errored],
            2,
            "grader error: RuntimeError('HIDDEN-SECRET')",
        ),
    ]
