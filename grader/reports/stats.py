"""Class statistics for the instructor's summaries: score distributions, outcomes, pass rates per
check, and the most common mistakes and failures."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

from grader.reports.models import CheckStatus, ProblemReport, ProblemStatus, SubmissionReport
from grader.specs.problem import CheckId, Visibility

BUCKETS = ("0%", "1-49%", "50-99%", "100%")
# What became of a problem in one submission: graded (by its score), failed (a status that is
# neither graded nor not attempted: forbidden, timeout, crashed, import or grader error), or not
# attempted.
OUTCOMES = ("full marks", "partly", "no points", "failed", "not attempted")


@dataclass(frozen=True)
class ProblemStats:
    problem: str
    title: str
    max_score: float
    scores: list[float]
    attempted: int
    histogram: dict[str, int]
    outcomes: dict[str, int]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.scores) if self.scores else 0.0

    @property
    def median(self) -> float:
        return statistics.median(self.scores) if self.scores else 0.0


@dataclass(frozen=True)
class CheckStats:
    """How often a check passed, out of the submissions it ran on."""

    problem: str
    name: str
    visibility: Visibility
    passed: int
    ran: int

    @property
    def rate(self) -> float:
        return self.passed / self.ran if self.ran else 0.0


@dataclass(frozen=True)
class FailureStats:
    """A way a problem failed (a status, or an error on one check) and who it happened to."""

    problem: str
    failure: ProblemStatus | CheckStatus
    check: str
    submissions: list[str]
    example: str


@dataclass(frozen=True)
class MistakeStats:
    problem: str
    mistake: str
    description: str
    submissions: int


@dataclass(frozen=True)
class ClassStats:
    submissions: int
    max_total: float
    totals: list[float]
    grader_errors: int
    problems: list[ProblemStats]
    checks: list[CheckStats]
    mistakes: list[MistakeStats]
    failures: list[FailureStats]

    @property
    def mean_total(self) -> float:
        return statistics.fmean(self.totals) if self.totals else 0.0

    @property
    def median_total(self) -> float:
        return statistics.median(self.totals) if self.totals else 0.0


def bucket(score: float, max_score: float) -> str:
    if max_score <= 0 or score <= 0:
        return BUCKETS[0]
    if score >= max_score:
        return BUCKETS[3]
    return BUCKETS[1] if score / max_score < 0.5 else BUCKETS[2]


def outcome(problem: ProblemReport) -> str:
    """One of OUTCOMES."""
    if problem.status is ProblemStatus.not_attempted:
        return "not attempted"
    if problem.status is not ProblemStatus.graded:
        return "failed"
    if problem.score >= problem.max_score:
        return "full marks"
    return "partly" if problem.score > 0 else "no points"


def problem_ids(reports: list[SubmissionReport]) -> list[str]:
    """Every problem of the batch, in the order the reports list them."""
    seen: dict[str, None] = {}
    for report in reports:
        seen.update((p.problem, None) for p in report.problems)
    return list(seen)


def class_stats(reports: list[SubmissionReport]) -> ClassStats:
    problems = []
    for problem_id in problem_ids(reports):
        entries = [p for r in reports for p in r.problems if p.problem == problem_id]
        max_score = max(p.max_score for p in entries)
        scores = [p.score for p in entries]
        histogram = Counter(bucket(s, max_score) for s in scores)
        outcomes = Counter(outcome(p) for p in entries)
        problems.append(
            ProblemStats(
                problem=problem_id,
                title=entries[0].title,
                max_score=max_score,
                scores=scores,
                attempted=sum(p.status is not ProblemStatus.not_attempted for p in entries),
                histogram={b: histogram.get(b, 0) for b in BUCKETS},
                outcomes={o: outcomes.get(o, 0) for o in OUTCOMES},
            )
        )
    return ClassStats(
        submissions=len(reports),
        max_total=max((r.max_total for r in reports), default=0.0),
        totals=[r.total for r in reports],
        grader_errors=sum(r.grader_fault for r in reports),
        problems=problems,
        checks=check_stats(reports),
        mistakes=common_mistakes(reports),
        failures=common_failures(reports),
    )


def check_stats(reports: list[SubmissionReport]) -> list[CheckStats]:
    """Each check's passes out of the submissions it ran on, in the order the reports list them."""
    ran: Counter[tuple[str, str]] = Counter()
    passed: Counter[tuple[str, str]] = Counter()
    visibility: dict[tuple[str, str], Visibility] = {}
    for report in reports:
        for problem in report.problems:
            for check in problem.checks:
                key = (problem.problem, check.name)
                visibility.setdefault(key, check.visibility)
                ran[key] += 1
                passed[key] += check.status is CheckStatus.passed
    return [
        CheckStats(p, name, visibility[p, name], passed[p, name], n) for (p, name), n in ran.items()
    ]


def failures_of(problem: ProblemReport) -> list[tuple[ProblemStatus | CheckStatus, str, str]]:
    """How a problem failed, each with the check concerned and a message: its status when that is
    a failure (with what was forbidden, for a forbidden API), else each check on which the
    candidate's code raised, crashed or timed out."""
    if problem.status is ProblemStatus.not_attempted:
        return []
    if problem.status is ProblemStatus.forbidden_api:
        culprits = [
            c
            for c in problem.checks
            if c.check == CheckId.forbidden_api and c.status is not CheckStatus.passed
        ]
        return [(problem.status, "", culprits[0].message if culprits else problem.message)]
    if problem.status is not ProblemStatus.graded:
        return [(problem.status, "", problem.message)]
    return [(c.status, c.name, c.message) for c in problem.checks if c.status is CheckStatus.error]


def common_failures(reports: list[SubmissionReport]) -> list[FailureStats]:
    """Failures by the number of submissions they happened to, most common first."""
    who: dict[tuple[str, ProblemStatus | CheckStatus, str], list[str]] = {}
    examples: dict[tuple[str, ProblemStatus | CheckStatus, str], str] = {}
    for report in reports:
        for problem in report.problems:
            for failure, check, message in failures_of(problem):
                key = (problem.problem, failure, check)
                who.setdefault(key, []).append(report.submission)
                examples.setdefault(key, message)
    ranked = sorted(who.items(), key=lambda item: -len(item[1]))
    return [FailureStats(p, f, c, names, examples[p, f, c]) for (p, f, c), names in ranked]


def common_mistakes(reports: list[SubmissionReport]) -> list[MistakeStats]:
    """Named mistakes by the number of submissions that made them, most common first."""
    counts: Counter[tuple[str, str]] = Counter()
    descriptions: dict[tuple[str, str], str] = {}
    for report in reports:
        seen = set()
        for problem in report.problems:
            for check in problem.checks:
                diagnosis = check.diagnosis
                if diagnosis is None or diagnosis.mistake is None:
                    continue
                key = (problem.problem, diagnosis.mistake)
                seen.add(key)
                descriptions.setdefault(key, diagnosis.description or "")
        counts.update(seen)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [MistakeStats(p, m, descriptions[(p, m)], n) for (p, m), n in ranked]
