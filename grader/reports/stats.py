"""Class statistics for the instructor's summaries: score distributions and common mistakes."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

from grader.reports.models import ProblemStatus, SubmissionReport

BUCKETS = ("0%", "1-49%", "50-99%", "100%")


@dataclass(frozen=True)
class ProblemStats:
    problem: str
    title: str
    max_score: float
    scores: list[float]
    attempted: int
    histogram: dict[str, int]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.scores) if self.scores else 0.0

    @property
    def median(self) -> float:
        return statistics.median(self.scores) if self.scores else 0.0


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
    mistakes: list[MistakeStats]

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
        problems.append(
            ProblemStats(
                problem=problem_id,
                title=entries[0].title,
                max_score=max_score,
                scores=scores,
                attempted=sum(p.status is not ProblemStatus.not_attempted for p in entries),
                histogram={b: histogram.get(b, 0) for b in BUCKETS},
            )
        )
    return ClassStats(
        submissions=len(reports),
        max_total=max((r.max_total for r in reports), default=0.0),
        totals=[r.total for r in reports],
        grader_errors=sum(r.grader_fault for r in reports),
        problems=problems,
        mistakes=common_mistakes(reports),
    )


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
