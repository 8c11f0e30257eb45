"""Preparing a run: each problem's plan and the reference's results, once per seed and secret."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from grader.errors import GraderFault
from grader.sandboxing.results import ProbeData, ProbeResult
from grader.verdict.checks import Check
from grader.verdict.plan import Plan
from grader.verdict.reference import ReferenceSource

if TYPE_CHECKING:
    from grader.courses.catalog import Problem


@dataclass
class Prepared:
    problem: Problem
    plan: Plan
    checks: list[Check]
    reference: dict[str, ProbeResult]


def prepare(
    problems: list[Problem], seed: int, source: ReferenceSource, secret: bytes | None = None
) -> dict[str, Prepared]:
    """Plan every problem's probes on inputs drawn from `seed` and `secret` and get the
    reference's results on them from `source`, the caller's (the reference run through the
    sandbox's executor, or a kit's record of it)."""
    torch.set_num_threads(1)
    prepared = {}
    for problem in problems:
        plan = Plan(problem.spec, seed, source, secret)
        checks = problem.checks()
        for check in checks:
            check.prepare(plan)
        results = {}
        for probe_id, probe in plan.probes.items():
            data, tensors = source.run(problem.spec.id, probe, plan.tensors)
            parsed = ProbeData.model_validate(data)
            if parsed.error is not None and not probe.get("expect_error"):
                raise GraderFault(
                    f"{problem.spec.id}: the reference failed probe {probe_id}: "
                    f"{parsed.error.summary()}"
                )
            results[probe_id] = ProbeResult(parsed, tensors)
        prepared[problem.spec.id] = Prepared(problem, plan, checks, results)
    return prepared
