"""A realistic class (no grading): thirty submissions over the whole catalog, with long names,
students, named mistakes and every kind of failure, the most frequent of them known."""

from __future__ import annotations

import random

from grader.reports.models import (
    CheckReport,
    CheckStatus,
    Diagnosis,
    ProblemReport,
    ProblemStatus,
    Student,
    SubmissionReport,
)
from grader.specs.problem import Visibility
from tests.reports import ERR, check, not_attempted, problem, submission

MAXIMA = {
    "self_attention": 11,
    "causal_attention": 16,
    "mha_wrapper": 17,
    "split_heads": 13,
    "multi_head_attention": 18,
    "multi_head_self_attention": 12,
    "mha_with_weights": 19,
    "fused_qkv_attention": 19,
    "causal_self_attention": 17,
    "flash_attention": 26,
    "mha_by_loop": 12,
}
# (name, points, visibility); "more configurations" takes what is left of a problem's maximum.
CHECKS = [
    ("output shape (B, T, C)", 1, Visibility.visible),
    ("matches the reference (float32)", 3, Visibility.visible),
    ("matches the reference (float64)", 1, Visibility.hidden),
    ("gradients reach the input and every parameter", 1, Visibility.hidden),
    ("no forbidden API", 1, Visibility.visible),
]
MORE = "every T <= block_size, every head count"
MISTAKES = [
    Diagnosis(
        mistake="scale_sqrt_c",
        description="scores scaled by sqrt(C), the full width, instead of sqrt(head_dim)",
        config="n_embd=48, n_head=4, block_size=8, dropout=0.0, input (2, 8, 48)",
        max_error=0.734,
        where="batch 1, token 7, channel 28, head 2",
    ),
    Diagnosis(
        mistake="no_causal_mask",
        description="no causal mask: tokens attend to future tokens",
        config="n_embd=48, n_head=4, block_size=8, dropout=0.0, input (2, 8, 48)",
        max_error=1.25,
        where="batch 0, token 2, channel 3, head 0",
    ),
]
# The class's most frequent failure: who it happens to is fixed, not drawn.
MOST_FREQUENT = ("mha_by_loop", ProblemStatus.timeout)
TIMED_OUT = "the problem timed out after 60 s; checks that finished count"
RARE_FAILURES = {
    ProblemStatus.forbidden_api: "the problem scores 0 (see its forbidden API check)",
    ProblemStatus.crashed: "the candidate's process was killed by signal 11; checks that "
    "finished count",
    ProblemStatus.import_error: "importing the file raised ModuleNotFoundError: No module "
    "named 'einops'",
}
FORBIDDEN = "calls torch.nn.functional.scaled_dot_product_attention (line 14)"
LONG_NAME = "submission_4711_Maximilian-Alexander_Oberhausen-Wittgenstein_late"


def checks_for(problem_id: str, passing: float, rng: random.Random) -> list[CheckReport]:
    """The problem's checks, each comparison passing with probability `passing` (a failed one
    names one of the known mistakes) and the others unless nothing passes."""
    specs = [*CHECKS, (MORE, MAXIMA[problem_id] - sum(p for _, p, _ in CHECKS), Visibility.hidden)]
    made = []
    for name, points, visibility in specs:
        compares = "reference" in name or name == MORE
        passed = rng.random() < passing if compares else passing > 0
        diagnosis = rng.choice(MISTAKES) if compares and not passed and name != MORE else None
        message = "3 configs agree" if passed else "output differs from the reference"
        status = CheckStatus.passed if passed else CheckStatus.failed
        made.append(check(name, status, points, visibility, message, diagnosis))
    return made


def failed(problem_id: str, status: ProblemStatus, rng: random.Random) -> ProblemReport:
    """A problem that failed with `status` (not a timeout), its checks as that leaves them."""
    checks = checks_for(problem_id, 0.7, rng)
    message = RARE_FAILURES[status]
    if status is ProblemStatus.import_error:
        checks = [
            c.model_copy(update={"status": ERR, "points": 0.0, "message": message}) for c in checks
        ]
    if status is ProblemStatus.forbidden_api:
        checks[-2] = checks[-2].model_copy(
            update={
                "check": "forbidden_api",
                "status": CheckStatus.failed,
                "points": 0.0,
                "message": FORBIDDEN,
            }
        )
    return problem(problem_id, status, checks, MAXIMA[problem_id], message)


def attempt(problem_id: str, index: int, rng: random.Random) -> ProblemReport:
    """Submission `index`'s report on one problem."""
    if problem_id == MOST_FREQUENT[0] and index % 4 == 1:
        checks = checks_for(problem_id, 0.8, rng)[:3]
        return problem(problem_id, MOST_FREQUENT[1], checks, MAXIMA[problem_id], TIMED_OUT)
    draw = rng.random()
    if draw < 0.25:
        return not_attempted(problem_id, MAXIMA[problem_id])
    if draw < 0.3:
        return failed(problem_id, rng.choice(list(RARE_FAILURES)), rng)
    passing = 1.0 if draw < 0.65 else rng.choice((0.0, 0.5, 0.8))
    checks = checks_for(problem_id, passing, rng)
    return problem(problem_id, ProblemStatus.graded, checks, MAXIMA[problem_id])


def realistic_class(size: int = 30, seed: int = 13) -> list[SubmissionReport]:
    rng = random.Random(seed)
    reports = []
    for index in range(size):
        name = LONG_NAME if index == 4 else f"submission_{1000 + index}"
        who = Student(id=f"student{index}@example.org", name=f"Student Number{index}")
        problems = [attempt(p, index, rng) for p in MAXIMA]
        reports.append(submission(name, problems, index % 60, student=who))
    return reports
