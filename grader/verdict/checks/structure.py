"""Checks on how a module is built: parameters by name, their count, the mask buffer, named
attributes, raises."""

from __future__ import annotations

import builtins
import math
from typing import Any, TypeVar

from pydantic import Field, field_validator

from grader.reports.models import CheckStatus
from grader.sandboxing.owntext import (
    SHOWN_NAMES,
    others,
    own,
    own_name,
    own_names,
    own_shape,
    shown,
)
from grader.sandboxing.results import InspectInfo, ParamInfo, TensorOut
from grader.specs.problem import CheckId, Config
from grader.verdict.checks.base import (
    Check,
    ConfigParams,
    Context,
    Failure,
    NoParams,
    Verdict,
    config_text,
    describe,
    register,
)
from grader.verdict.checks.returned import public_attr, value_text
from grader.verdict.checks.values import passed
from grader.verdict.plan import Plan


class OneConfigParams(NoParams):
    config: str | None = None


OC = TypeVar("OC", bound=OneConfigParams)


class Inspecting(Check[OC]):
    """A check that reads the structure of a module built from one config."""

    def config(self) -> Config:
        name = self.params.config
        return self.problem.config(name) if name else self.configs()[0]

    def prepare(self, plan: Plan) -> None:
        self.probe = plan.call_probe(self.config(), inspect=[], call=False)

    def inspected(self, ctx: Context, probe: str | None = None) -> tuple[InspectInfo, InspectInfo]:
        probe = probe or self.probe
        got = ctx.result(probe).data.inspect
        want = ctx.reference(probe).data.inspect
        assert got is not None and want is not None
        return got, want


@register(CheckId.parameter_names)
class ParameterNames(Inspecting[OneConfigParams]):
    """Parameters carry the contract's names and shapes, no more, no less, none shared."""

    def judge(self, ctx: Context) -> Verdict:
        got, want = self.inspected(ctx)
        load = ctx.result(self.probe).data.load
        assert load is not None
        if not load.ok:
            expected = ", ".join(f"{p.name} {tuple(p.shape)}" for p in want.params)
            found = load.summary(ctx.names, ctx.sizes(self.probe))
            return Verdict(CheckStatus.failed, f"{found} (expected: {expected})")
        seen: dict[int, str] = {}
        for p in got.params:
            if p.storage in seen:
                first, other = (param_name(name, ctx) for name in (p.name, seen[p.storage]))
                return Verdict(
                    CheckStatus.failed,
                    f"{first} and {other} share one tensor; each needs its own weights",
                )
            seen[p.storage] = p.name
        return passed(f"{len(want.params)} parameters, named as the contract says")


def param_name(name: str, ctx: Context) -> str:
    """A parameter's name as the candidate may see it (`own_name`)."""
    return own_name(name, ctx.names, "a parameter of another name")


@register(CheckId.param_count)
class ParamCount(Inspecting[OneConfigParams]):
    """The module has exactly as many trainable parameters as the contract implies."""

    def judge(self, ctx: Context) -> Verdict:
        got, want = self.inspected(ctx)
        count = unique_count(got)
        expected = unique_count(want)
        if count != expected:
            extra = "more" if count > expected else "fewer"
            how = own(f"{count} parameters, {abs(count - expected)} {extra}", f"{extra} parameters")
            return Verdict(
                CheckStatus.failed,
                f"{how} than the {expected} expected for {describe(self.config())} "
                f"(has: {params_text(got.params, ctx, ctx.sizes(self.probe))})",
            )
        return passed(f"{count} parameters")


def params_text(params: list[ParamInfo], ctx: Context, sizes: frozenset[int]) -> str:
    """`W_q (48, 48), W_k (48, 48)`; to the candidate, the names they may see (`own_names`),
    each with its shape as `own_shape` shows it."""
    full = ", ".join(f"{p.name} {tuple(p.shape)}" for p in params)
    kept = [p for p in params if shown(p.name, ctx.names)][:SHOWN_NAMES]
    public = [f"{p.name} {own_shape(p.shape, sizes)}" for p in kept]
    if len(kept) < len(params):
        public.append(others(len(params) - len(kept)))
    return own(full, ", ".join(public))


def unique_count(info: InspectInfo) -> int:
    by_storage = {p.storage: math.prod(p.shape) for p in info.params if p.requires_grad}
    return sum(by_storage.values())


class MaskBufferParams(OneConfigParams):
    names: list[str] = Field(default_factory=list)  # buffers the contract names


@register(CheckId.mask_buffer)
class MaskBuffer(Inspecting[MaskBufferParams]):
    """The causal mask is a registered buffer (not a plain tensor attribute), under the names
    the contract gives, and the module still works after `.double()`."""

    def prepare(self, plan: Plan) -> None:
        config = self.config()
        self.probe = plan.call_probe(config, inspect=[], call=False)
        self.double = plan.call_probe(config, dtype="float64")

    def judge(self, ctx: Context) -> Verdict:
        got, _ = self.inspected(ctx)
        if got.tensor_attrs:
            names = own_names(got.tensor_attrs, ctx.names)
            return Verdict(
                CheckStatus.failed,
                f"tensor attribute {names} is not a registered buffer: use "
                "self.register_buffer(...) so that module.to(...) moves it",
            )
        if not got.buffers:
            return Verdict(CheckStatus.failed, "no registered buffer: register the causal mask")
        found = [b.name for b in got.buffers]
        missing = [name for name in self.params.names if name not in found]
        if missing:
            return Verdict(
                CheckStatus.failed,
                f"no buffer named {', '.join(missing)} (found {own_names(found, ctx.names)}): the "
                "contract names the causal mask buffer",
            )
        try:
            out = ctx.returned(self.double)
        except Failure as failure:
            return Verdict(CheckStatus.failed, f"forward after .double(): {failure.message}")
        want = ctx.reference(self.double).data.calls[0].outputs[0]
        assert isinstance(want, TensorOut)
        if out.dtype != want.dtype:
            return Verdict(
                CheckStatus.failed,
                f"forward after .double() returned {value_text(out, ctx.sizes(self.double))}, "
                f"expected a {want.dtype} tensor",
            )
        return passed(f"buffer {own_names(found, ctx.names)} moves with the module")


class AttributesParams(ConfigParams):
    names: list[str] = Field(min_length=1)


@register(CheckId.attributes)
class Attributes(Check[AttributesParams]):
    """Plain attributes the contract names (head counts, sizes, flags) hold the reference's
    values, of the same type."""

    def prepare(self, plan: Plan) -> None:
        self.probes = {
            c.id: plan.call_probe(c, inspect=self.params.names, call=False) for c in self.configs()
        }

    def judge(self, ctx: Context) -> Verdict:
        for config in self.configs():
            probe = self.probes[config.id]
            got = ctx.result(probe).data.inspect
            want = ctx.reference(probe).data.inspect
            assert got is not None and want is not None
            for name in self.params.names:
                value, expected = got.attrs.get(name), want.attrs[name]
                if type(value) is type(expected) and value == expected:
                    continue
                where = f"{config_text(config)}"
                if isinstance(value, dict) and value.get("missing"):
                    return Verdict(
                        CheckStatus.failed,
                        f"{where}: no attribute {name}; the contract names it "
                        f"(expected {expected!r})",
                    )
                full = (
                    f"a {value.get('type', 'object')}" if isinstance(value, dict) else repr(value)
                )
                shown_as = own(full, public_attr(value, expected))
                return Verdict(
                    CheckStatus.failed, f"{where}: {name} is {shown_as}, expected {expected!r}"
                )
        return passed(", ".join(self.params.names) + " as the contract says")


class RaisesParams(NoParams):
    init: dict[str, Any] | None = None
    config: str | None = None
    exceptions: list[str] = Field(
        default_factory=lambda: ["ValueError", "AssertionError"],
        description="Python's built-in exceptions (by class name) that count as rejecting it.",
    )

    @field_validator("exceptions")
    @classmethod
    def built_in(cls, names: list[str]) -> list[str]:
        for name in names:
            found = getattr(builtins, name, None) if name.isidentifier() else None
            if not (isinstance(found, type) and issubclass(found, BaseException)):
                raise ValueError(f"{name!r} is not one of Python's built-in exceptions")
        return names


@register(CheckId.raises)
class Raises(Check[RaisesParams]):
    """A bad configuration is rejected: by the constructor (`init`) or by a call (`config`)."""

    def prepare(self, plan: Plan) -> None:
        if self.params.config is not None:
            config = self.problem.config(self.params.config)
            self.stage, self.what = "call", f"calling with {describe(config)}"
            self.probe = plan.call_probe(config, expect_error=True)
        else:
            args = ", ".join(f"{k}={v}" for k, v in (self.params.init or {}).items())
            self.stage, self.what = "init", f"constructing with {args}"
            self.probe = plan.probe(
                {
                    "symbol": self.problem.symbol,
                    "init": self.params.init,
                    "weights": None,
                    "setup": [],
                    "mode": "eval",
                    "calls": [],
                    "expect_error": True,
                }
            )

    def judge(self, ctx: Context) -> Verdict:
        result = ctx.sub.probes.get(self.probe)
        if result is None:
            raise ctx.missing()
        error = result.data.error
        wanted = " or ".join(self.params.exceptions)
        if error is None:
            return Verdict(CheckStatus.failed, f"{self.what} did not raise {wanted}")
        ctx.found_symbol(self.probe, error)
        if error.stage != self.stage or error.type not in self.params.exceptions:
            return Verdict(
                CheckStatus.failed,
                f"{self.what} raised {error.summary(ctx.files, ctx.known(self.probe))}"
                f"{ctx.constructor_hint(self.probe, error)}; expected {wanted}",
            )
        return passed(f"{self.what} raises {error.type}")
