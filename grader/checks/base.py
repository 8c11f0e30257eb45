"""The check library's frame: a check asks for probes, then judges their results on the host."""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import torch
from pydantic import BaseModel, ConfigDict

from grader.plan import Plan
from grader.report import CheckStatus, Diagnosis
from grader.results import ProbeResult, ProblemRun
from grader.spec import CheckSpec, Config, ProblemSpec


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConfigParams(NoParams):
    """Which of the problem's configs a check probes (all of them by default)."""

    configs: list[str] | None = None


P = TypeVar("P", bound=BaseModel)


class Failure(Exception):
    """The candidate's code did not give what a check needs: a verdict, not a grader fault."""

    def __init__(self, message: str, status: CheckStatus = CheckStatus.failed) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Verdict:
    status: CheckStatus
    message: str = ""
    diagnosis: Diagnosis | None = None


@dataclass
class Context:
    """What a check judges: the candidate's results, the reference's, and the source files."""

    spec: ProblemSpec
    plan: Plan
    sub: ProblemRun
    ref: dict[str, ProbeResult]
    sources: dict[str, str]

    def result(self, probe_id: str) -> ProbeResult:
        """The candidate's result for a probe; a Failure says why there is none or it raised."""
        result = self.sub.probes.get(probe_id)
        if result is None:
            raise Failure(self.missing_reason(), CheckStatus.error)
        if result.data.error is not None:
            error = result.data.error
            stage = {
                "init": "the constructor raised",
                "inspect": "the module could not be inspected",
                "load": "the grader's weights could not be loaded",
                "setup": "moving or converting the module failed",
                "call": "the call raised",
                "import": "importing the file raised",
            }[error.stage]
            raise Failure(f"{stage}: {error.summary()}", CheckStatus.error)
        return result

    def reference(self, probe_id: str) -> ProbeResult:
        return self.ref[probe_id]

    def output(self, probe_id: str, call: int = 0, index: int = 0) -> torch.Tensor:
        """A tensor the candidate returned; a Failure when it returned no tensor there."""
        result = self.result(probe_id)
        tensor = result.output(call, index)
        if tensor is None:
            calls = result.data.calls
            got = calls[call].outputs if call < len(calls) else []
            what = got[index].model_dump() if index < len(got) else "nothing"
            raise Failure(f"expected a tensor as output {index}, got {what}")
        return tensor

    def missing_reason(self) -> str:
        exit = self.sub.exit
        limit = self.spec.limits.problem_seconds
        if exit is None:
            return "the worker ended before this problem ran (see the submission's other errors)"
        if exit.timed_out:
            return f"the problem timed out (limit {limit:g} s) before this check's probe finished"
        if exit.signal is not None:
            name = signal.Signals(exit.signal).name if exit.signal in signal.valid_signals() else ""
            return (
                f"the process was killed by signal {exit.signal} {name} during this check".strip()
            )
        if exit.exit_code not in (0, None):
            return f"the process exited with code {exit.exit_code} during this check"
        if self.sub.invalid:
            return "the worker's output was malformed: " + "; ".join(self.sub.invalid[:3])
        return "the process ended without a result for this check (e.g. os._exit in the code)"


class Check:
    """A reusable check; subclasses set `params_model` and implement `prepare` and `judge`."""

    id: ClassVar[str]
    params_model: ClassVar[type[BaseModel]] = NoParams

    def __init__(self, spec: CheckSpec, problem: ProblemSpec) -> None:
        self.spec = spec
        self.problem = problem
        self.params: Any = self.params_model.model_validate(spec.params)

    def configs(self) -> list[Config]:
        wanted = getattr(self.params, "configs", None)
        if wanted is None:
            return [c for c in self.problem.configs if c.init is not None or c.args]
        return [self.problem.config(c) for c in wanted]

    def prepare(self, plan: Plan) -> None:
        """Register the probes this check needs."""

    def judge(self, ctx: Context) -> Verdict:
        raise NotImplementedError


CHECKS: dict[str, type[Check]] = {}

C = TypeVar("C", bound=type[Check])


def register(check_id: str) -> Callable[[C], C]:
    """Add a check class to the library under `check_id`."""

    def add(cls: C) -> C:
        if check_id in CHECKS and CHECKS[check_id] is not cls:
            raise ValueError(f"check {check_id!r} is registered twice")
        cls.id = check_id
        CHECKS[check_id] = cls
        return cls

    return add
