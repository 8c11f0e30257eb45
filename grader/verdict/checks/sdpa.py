"""Checks on a fused fast path: the SDPA calls traced while the entry ran, and the manual path
reached by switching an attribute after construction."""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field, model_validator

from grader.reports.models import CheckStatus
from grader.sandboxing.owntext import own, own_value
from grader.sandboxing.results import TraceEntry
from grader.specs.problem import CheckId, Config
from grader.strict import Strict
from grader.verdict.checks.base import (
    Check,
    ConfigParams,
    Context,
    Verdict,
    about,
    config_text,
    register,
)
from grader.verdict.checks.values import AllCloseParams, Closeness, passed
from grader.verdict.diagnose import locate
from grader.verdict.plan import Mode, Plan
from sandbox.protocol import SetupOp, family_of

SDPA = "scaled_dot_product_attention"


class SetupStep(Strict):
    """A change to the module after construction: `set` attribute `name` to `value`, or make
    it `double`."""

    op: Literal["double", "set"]
    name: str = ""
    value: bool | int | float | str | None = None

    @model_validator(mode="after")
    def _named(self) -> SetupStep:
        if self.op == "set" and not self.name:
            raise ValueError("a `set` step names the attribute it sets")
        return self

    def request(self) -> SetupOp:
        if self.op == "double":
            return {"op": "double"}
        return {"op": "set", "name": self.name, "value": self.value}


def requests(setup: list[SetupStep]) -> list[SetupOp]:
    """The setup steps as the worker takes them."""
    return [step.request() for step in setup]


def describe_setup(setup: list[SetupStep]) -> str:
    """`flash = False` for [{"op": "set", "name": "flash", "value": False}]."""
    parts = [f"{step.name} = {step.value}" for step in setup if step.op == "set"]
    return ", ".join(parts) or "as constructed"


class SdpaParams(ConfigParams):
    mode: Mode = "eval"
    setup: list[SetupStep] = Field(default_factory=list)
    called: bool = True
    is_causal: bool | None = None
    dropout_p: float | str | None = None  # a value, or the constructor argument holding it
    default_scale: bool = False


@register(CheckId.sdpa_calls)
class SdpaCalls(Check[SdpaParams]):
    """F.scaled_dot_product_attention is called (or not), with the expected `is_causal`,
    `dropout_p` and no explicit `scale`."""

    def prepare(self, plan: Plan) -> None:
        self.probes = {
            c.id: plan.call_probe(c, mode=self.params.mode, setup=requests(self.params.setup))
            for c in self.configs()
        }

    def dropout_p(self, config: Config) -> float | None:
        wanted: float | str | None = self.params.dropout_p
        if isinstance(wanted, str):
            return float((config.init or {})[wanted])
        return wanted

    def judge(self, ctx: Context) -> Verdict:
        how = f"in {self.params.mode} mode, {describe_setup(self.params.setup)}"
        for config in self.configs():
            trace = ctx.result(self.probes[config.id]).data.calls[0].trace
            calls = [e for e in trace if e.fn == SDPA]
            where = f"{config_text(config)} ({how})"
            if not self.params.called:
                fused = sorted({e.fn for e in trace if family_of(e.fn) is not None})
                if fused:
                    return Verdict(
                        CheckStatus.failed,
                        f"{where}: {own(', '.join(fused), 'a fused attention operator')} was "
                        "called: this path must compute attention itself",
                    )
                continue
            if not calls:
                return Verdict(
                    CheckStatus.failed, f"{where}: F.scaled_dot_product_attention was not called"
                )
            for entry in calls:
                problem = self.wrong_argument(entry, config)
                if problem is not None:
                    return Verdict(CheckStatus.failed, f"{where}: {problem}")
        if not self.params.called:
            return passed(f"no SDPA call ({how})")
        return passed(f"SDPA called as expected ({how})")

    def wrong_argument(self, entry: TraceEntry, config: Config) -> str | None:
        if self.params.is_causal is not None and entry.is_causal != self.params.is_causal:
            return f"is_causal={entry.is_causal}, expected is_causal={self.params.is_causal}" + (
                " (let SDPA build the causal mask)" if self.params.is_causal else ""
            )
        dropout_p = self.dropout_p(config)
        if dropout_p is not None and not abs((entry.dropout_p or 0.0) - dropout_p) <= 1e-12:
            gate = " (dropout_p must be 0.0 when not self.training)" if dropout_p == 0 else ""
            passed_p = own(f"={entry.dropout_p}", " was another value")
            return f"dropout_p{passed_p}, expected {dropout_p}{gate}"
        if self.params.default_scale and entry.scale is not None:
            return (
                f"scale{own(f'={entry.scale}', '')} passed: leave the scaling to SDPA "
                "(no manual scaling on the flash path)"
            )
        return None


class SetupAllCloseParams(AllCloseParams):
    setup: list[SetupStep]


@register(CheckId.allclose_after_setup)
class AllCloseAfterSetup(Closeness[SetupAllCloseParams]):
    """`allclose` on a module changed by setup ops after construction (e.g. its path switched)."""

    def prepare(self, plan: Plan) -> None:
        self.probes = {
            c.id: plan.call_probe(c, dtype=self.dtype(), setup=requests(self.params.setup))
            for c in self.configs()
        }


class AgreeParams(ConfigParams):
    setup: list[SetupStep]
    atol: float = 1e-5


@register(CheckId.paths_agree)
class PathsAgree(Check[AgreeParams]):
    """The module's outputs as constructed and after the setup ops agree within `atol`."""

    def prepare(self, plan: Plan) -> None:
        self.probes = {
            c.id: (plan.call_probe(c), plan.call_probe(c, setup=requests(self.params.setup)))
            for c in self.configs()
        }

    def judge(self, ctx: Context) -> Verdict:
        switched = describe_setup(self.params.setup)
        for config_id, (first, second) in self.probes.items():
            with about(self.problem.config(config_id)):
                a, b = ctx.output(first), ctx.output(second)
                if ctx.one_number(first):
                    return Verdict(
                        CheckStatus.failed,
                        f"{config_text(self.problem.config(config_id))}: the output is one "
                        "number everywhere: paths that agree on it show nothing",
                    )
            diff = (a.double() - b.double()).abs()
            if not bool(torch.all(diff <= self.params.atol)):
                return Verdict(
                    CheckStatus.failed,
                    f"{config_text(self.problem.config(config_id))}: "
                    f"the outputs as constructed and with {switched} differ "
                    f"by {own_value(float(diff.max()))} at {locate(diff, None)} (allowed "
                    f"{self.params.atol:g})",
                )
        return passed(f"outputs agree within {self.params.atol:g} with {switched}")
