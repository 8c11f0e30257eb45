"""Checks on returned values: shapes, closeness to the reference, contiguity, causality."""

from __future__ import annotations

from typing import Any, TypeVar

import torch

from grader.reports.models import AttentionPattern, CheckStatus, Diagnosis
from grader.sandboxing.owntext import coarse_error, own, own_value
from grader.specs.problem import CheckId, Config, ModuleArg
from grader.verdict import diagnose, patterns
from grader.verdict.checks.base import (
    Check,
    ConfigParams,
    Context,
    Failure,
    Verdict,
    about,
    config_text,
    describe,
    register,
)
from grader.verdict.checks.returned import dtype_text, nonfinite_text
from grader.verdict.plan import Dtype, Plan
from sandbox.protocol import Argument, Probe


def passed(message: str = "") -> Verdict:
    return Verdict(CheckStatus.passed, message)


CP = TypeVar("CP", bound=ConfigParams)


class PerConfig(Check[CP]):
    """A check that asks one eval-mode call per config and compares each with the reference;
    what a config returns wrongly is one of its findings, a config that raised ends the check."""

    def prepare(self, plan: Plan) -> None:
        self.probes = {c.id: plan.call_probe(c, dtype=self.dtype()) for c in self.configs()}

    def dtype(self) -> Dtype:
        return "float32"

    def judge(self, ctx: Context) -> Verdict:
        problems = []
        diagnosis = None
        for config in self.configs():
            try:
                found = self.compare(ctx, config, self.probes[config.id])
            except Failure as failure:
                if failure.status is not CheckStatus.failed:
                    failure.message = f"{config_text(config)}: {failure.message}"
                    raise
                found = failure.message, None
            if found is not None:
                message, diagnosis_here = found
                problems.append(f"{config_text(config)}: {message}")
                # the first config's diagnosis, unless a later one names a mistake
                named = diagnosis_here is not None and diagnosis_here.mistake is not None
                if diagnosis is None or (diagnosis.mistake is None and named):
                    diagnosis = diagnosis_here
        if problems:
            return Verdict(CheckStatus.failed, "\n".join(problems), diagnosis)
        return passed(f"{len(self.configs())} configs agree")

    def compare(
        self, ctx: Context, config: Config, probe: str
    ) -> tuple[str, Diagnosis | None] | None:
        raise NotImplementedError


@register(CheckId.output_shape)
class OutputShape(PerConfig[ConfigParams]):
    """Every output has exactly the reference's shape and dtype (no broadcasting)."""

    def compare(
        self, ctx: Context, config: Config, probe: str
    ) -> tuple[str, Diagnosis | None] | None:
        for i in range(output_count(ctx, probe)):
            got = ctx.output(probe, 0, i, finite=False)
            mismatch = dtype_mismatch(ctx, probe, i, got)
            if mismatch:
                return mismatch, None
        return None


def output_count(ctx: Context, probe: str) -> int:
    """How many outputs the reference returns for a probe."""
    return len(ctx.reference(probe).data.calls[0].outputs)


def dtype_mismatch(ctx: Context, probe: str, index: int, got: torch.Tensor) -> str:
    """Why an output's dtype is not the reference's ("" if it is)."""
    want = ctx.reference(probe).output(0, index)
    assert want is not None
    if got.dtype == want.dtype:
        return ""
    label = f"output {index}" if output_count(ctx, probe) > 1 else "output"
    return f"{label} dtype {dtype_text(got.dtype)}, expected {dtype_text(want.dtype)}"


class AllCloseParams(ConfigParams):
    dtype: Dtype = "float32"
    exact: bool = False
    outputs: list[int] | None = None


AP = TypeVar("AP", bound=AllCloseParams)


class Closeness(PerConfig[AP]):
    """Values match the reference within the problem's tolerance; a miss is diagnosed. Generic
    over its params, which `allclose_after_setup` extends."""

    def dtype(self) -> Dtype:
        return self.params.dtype

    def tolerance(self) -> tuple[float, float]:
        if self.params.exact:
            return 0.0, 0.0
        tol = self.problem.tolerance[self.params.dtype]
        return tol.atol, tol.rtol

    def compare(
        self, ctx: Context, config: Config, probe: str
    ) -> tuple[str, Diagnosis | None] | None:
        atol, rtol = self.tolerance()
        compared = self.params.outputs or range(output_count(ctx, probe))
        got_all = {i: ctx.output(probe, 0, i, finite=False) for i in compared}
        for i, got in got_all.items():
            want = ctx.reference(probe).output(0, i)
            assert want is not None
            mismatch = dtype_mismatch(ctx, probe, i, got)
            if mismatch:
                return mismatch, None
            if not torch.allclose(got, want, atol=atol, rtol=rtol):
                load = ctx.result(probe).data.load
                if load is not None and not load.ok:
                    found = load.summary(ctx.names, ctx.sizes(probe))
                    return f"weights could not be loaded by name: {found}", None
                return self.explain(ctx, config, probe, got_all, got, want, i, atol, rtol)
        return None

    def explain(
        self,
        ctx: Context,
        config: Config,
        probe: str,
        got_all: dict[int, torch.Tensor],
        got: torch.Tensor,
        want: torch.Tensor,
        index: int,
        atol: float,
        rtol: float,
    ) -> tuple[str, Diagnosis]:
        diff = (got.double() - want.double()).abs()
        max_error = float(diff.nan_to_num(nan=float("inf")).max())
        heads = diagnosis_params(ctx, config).get("heads")
        head_dim = got.shape[-1] // heads if heads and got.dim() == 3 else None
        where = diagnose.locate(diff, head_dim)
        tolerance = max(atol, 1e-5), max(rtol, 1e-4)
        match = identify(ctx, self.diagnoses, config, probe, got_all, *tolerance)
        label = f"output {index}" if output_count(ctx, probe) > 1 else "output"
        shown = own(f"{max_error:.3g}", coarse_error(max_error))
        message = f"{label} differs from the reference: max error {shown} at {where}"
        if not bool(torch.isfinite(got).all()):
            message += f" (it holds {nonfinite_text(got)})"
        if match is not None:
            message += f". It matches a known mistake: {match.description}"
        result = Diagnosis(
            mistake=match.mistake if match else None,
            description=match.description if match else None,
            config=describe(config),
            max_error=max_error,
            where=where,
        )
        return message, result


@register(CheckId.allclose)
class AllClose(Closeness[AllCloseParams]):
    """Values match the reference within the problem's tolerance; a miss is diagnosed."""


def diagnosis_params(ctx: Context, config: Config) -> dict[str, Any]:
    """The spec's diagnosis params with `heads_from` resolved against the config."""
    if ctx.spec.diagnosis is None:
        return {}
    params = dict(ctx.spec.diagnosis.params)
    source = params.pop("heads_from", None)
    if source is not None:  # "init.KEY" or "argN.init.KEY"
        *owner, key = source.split(".")
        arg = None if owner == ["init"] else config.args[int(owner[0][3:])]
        init = arg.init if isinstance(arg, ModuleArg) else config.init
        assert init is not None, f"{ctx.spec.id}: heads_from {source!r} names no init"
        params["heads"] = int(init[key])
    params.setdefault("function", config.symbol or ctx.spec.symbol)
    return params


def probe_inputs(
    plan: Plan, probe: Probe
) -> tuple[dict[str, torch.Tensor], list[Any], dict[str, Any]]:
    """The weights, arguments and keyword arguments of a probe's first call, as host tensors."""
    weights = {name: plan.tensors[key] for name, key in (probe.get("weights") or {}).items()}

    def value(arg: Argument) -> Any:
        if "tensor" in arg:
            return plan.tensors[arg["tensor"]]
        if "stub" in arg:
            for layer, keys in arg["stub"]["linears"].items():
                weights.update({f"{layer}.{kind}": plan.tensors[k] for kind, k in keys.items()})
            return None
        return arg["value"]

    call = probe["calls"][0]
    args = [value(a) for a in call["args"]]
    kwargs = {k: value(v) for k, v in call["kwargs"].items()}
    dtype = next((a.dtype for a in args if isinstance(a, torch.Tensor)), torch.float32)
    weights = {k: v.to(dtype) for k, v in weights.items()}
    return weights, args, kwargs


def identify(
    ctx: Context,
    diagnoses: diagnose.Diagnoses,
    config: Config,
    probe: str,
    got: dict[int, torch.Tensor],
    atol: float,
    rtol: float,
) -> diagnose.Match | None:
    spec = ctx.spec.diagnosis
    if spec is None:
        return None
    weights, args, kwargs = probe_inputs(ctx.plan, ctx.plan.probes[probe])
    params = diagnosis_params(ctx, config)
    return diagnose.identify(
        spec.form, diagnoses, spec.mistakes, weights, args, kwargs, params, got, atol, rtol
    )


@register(CheckId.contiguous)
class Contiguous(PerConfig[ConfigParams]):
    """Every returned tensor is contiguous."""

    def compare(
        self, ctx: Context, config: Config, probe: str
    ) -> tuple[str, Diagnosis | None] | None:
        for i in range(output_count(ctx, probe)):
            if not ctx.returned(probe, 0, i).contiguous:
                why = "call .contiguous() (reshape returns a view when it can)"
                return f"output {i} is not contiguous: {why}", None
        return None


class CausalityParams(ConfigParams):
    tolerance: float = 1e-6
    arg: int = 0


@register(CheckId.causality)
class Causality(Check[CausalityParams]):
    """Perturbing tokens after position t leaves every output at positions <= t unchanged."""

    def prepare(self, plan: Plan) -> None:
        self.probes: dict[str, tuple[str, int]] = {}
        for config in self.configs():
            args = plan.args(config)
            position = self.params.arg
            tensor = plan.tensor_argument(args, position)
            x = plan.tensors[tensor["tensor"]]
            cut = max(0, x.shape[1] // 2 - 1)
            noise = plan.tensor(f"noise/{config.id}", list(x.shape), 3.0)
            perturbed = x.clone()
            perturbed[:, cut + 1 :] += plan.tensors[noise][:, cut + 1 :]
            changed = list(args)
            changed[position] = {**tensor, "tensor": plan.put(f"future/{config.id}", perturbed)}
            self.probes[config.id] = (plan.call_probe(config, args=args, more_args=[changed]), cut)
        self.influence = self.influence_probe(plan, self.configs()[0])

    def influence_probe(self, plan: Plan, config: Config) -> str:
        """One call on the input, then one per token with only that token changed: what the
        feedback draws when tokens see the future."""
        args = plan.args(config)
        position = self.params.arg
        tensor = plan.tensor_argument(args, position)
        x = plan.tensors[tensor["tensor"]]
        noise = plan.tensors[plan.tensor(f"noise/{config.id}", list(x.shape), 3.0)]
        variants = []
        for token in range(min(x.shape[1], patterns.TOKENS)):
            moved = x.clone()
            moved[:, token] += noise[:, token]
            changed = list(args)
            changed[position] = {**tensor, "tensor": plan.put(f"token{token}/{config.id}", moved)}
            variants.append(changed)
        return plan.call_probe(config, args=args, more_args=variants)

    def influenced(self, ctx: Context) -> list[torch.Tensor]:
        """The candidate's outputs on the influence probe: on the input, then with each token
        changed in turn."""
        calls = range(len(ctx.reference(self.influence).data.calls))
        return [ctx.output(self.influence, k) for k in calls]

    def pattern(self, ctx: Context) -> AttentionPattern | None:
        """Which input tokens each output token depends on, the candidate's and the reference's;
        None if the candidate's module did not answer the probe as asked."""
        calls = range(len(ctx.reference(self.influence).data.calls))
        try:
            got = self.influenced(ctx)
        except Failure:
            return None
        want = [ctx.expected(self.influence, k) for k in calls]
        text = config_text(self.configs()[0])
        return patterns.influence_pattern((got[0], got[1:]), (want[0], want[1:]), text)

    def judge(self, ctx: Context) -> Verdict:
        for config_id, (probe, cut) in self.probes.items():
            with about(self.problem.config(config_id)):
                before = ctx.output(probe, 0)[:, : cut + 1].double()
                after = ctx.output(probe, 1)[:, : cut + 1].double()
            change = float((before - after).abs().max())
            if change > self.params.tolerance:
                where = diagnose.locate((before - after).abs(), None)
                return Verdict(
                    CheckStatus.failed,
                    f"{config_text(self.problem.config(config_id))}: "
                    f"changing tokens after position {cut} changed the output "
                    f"at or before it by {own_value(change)} ({where}): tokens attend to the "
                    "future",
                    pattern=self.pattern(ctx),
                )
        with about(self.configs()[0]):
            got = [g.double() for g in self.influenced(ctx)]
        if all(float((g - got[0]).abs().max()) <= self.params.tolerance for g in got[1:]):
            return Verdict(
                CheckStatus.failed,
                f"{config_text(self.configs()[0])}: changing any one input token changed no "
                "output: an output that depends on no token shows nothing of a causal mask",
                pattern=self.pattern(ctx),
            )
        return passed("no token sees the future")
