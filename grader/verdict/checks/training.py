"""Checks on training behaviour: dropout in train and eval mode, and gradients."""

from __future__ import annotations

import torch
from pydantic import Field

from grader.reports.models import CheckStatus
from grader.sandboxing.owntext import own, own_value
from grader.specs.problem import CheckId
from grader.verdict.checks.base import (
    Check,
    ConfigParams,
    Context,
    NoParams,
    Verdict,
    about,
    config_text,
    gradient_label,
    register,
)
from grader.verdict.checks.placement import placement_fault, ratios
from grader.verdict.checks.returned import public_attr, shape_text
from grader.verdict.checks.values import passed
from grader.verdict.diagnose import close, locate
from grader.verdict.plan import Plan


class PlacementParams(NoParams):
    """A one-token config (T = 1, 0 < p < 1) that shows where dropout acts."""

    config: str
    heads_from: str | None = None  # the constructor argument giving the head count (else 1)
    projection: str | None = None  # the output projection, loaded as the identity
    resid: bool = False  # a second dropout acts on the projection's output


class DropoutParams(NoParams):
    config: str
    argument: str = "dropout"
    attributes: list[str] = Field(default_factory=list)
    placement: PlacementParams | None = None


@register(CheckId.dropout)
class Dropout(Check[DropoutParams]):
    """Eval mode ignores dropout (deterministic, and equal to the same module built with p = 0);
    train mode is random; the dropout sits on the attention weights: at T = 1 it drops whole
    heads (see `placement`), and with p = 1 the output is what the reference gives."""

    def prepare(self, plan: Plan) -> None:
        config = self.problem.config(self.params.config)
        assert config.init is not None and config.init[self.params.argument] > 0
        self.eval = plan.call_probe(config, seeds=[1, 2], inspect=self.params.attributes)
        self.train = plan.call_probe(config, mode="train", seeds=[1, 2])
        args = plan.args(config)
        off = {**config.init, self.params.argument: 0.0}
        self.off = plan.call_probe(config, init=off, args=args)
        full = {**config.init, self.params.argument: 1.0}
        self.full = plan.call_probe(config, mode="train", seeds=[3], init=full, args=args)
        self.p = float(config.init[self.params.argument])
        placement = self.params.placement
        self.placement = None if placement is None else self.prepare_placement(plan, placement)

    def prepare_placement(
        self, plan: Plan, params: PlacementParams
    ) -> tuple[PlacementParams, str, str]:
        """Eval and train probes at T = 1, in float64, through an identity projection whose
        weight gradient (one-hot per batch row) gives back the context vectors it received."""
        config = self.problem.config(params.config)
        assert config.init is not None and 0 < config.init[self.params.argument] < 1
        batch, tokens = config.args[0].shape[:2]  # type: ignore[union-attr]
        assert tokens == 1 and not (params.resid and params.projection is None)
        weights = plan.weights(config)
        gradient = None
        if params.projection is not None:
            name = f"{params.projection}.weight"
            width, fan_in = plan.tensors[weights[name]].shape
            assert width == fan_in and width >= batch
            weights[name] = plan.put(f"identity/{config.id}/{name}", torch.eye(width))
            bias = f"{params.projection}.bias"
            if bias in weights:
                weights[bias] = plan.put(f"zero/{config.id}/{bias}", torch.zeros(width))
            rows = torch.arange(width) % batch == torch.arange(batch)[:, None]  # (B, C)
            gradient = plan.put(f"one-hot/{config.id}", rows[:, None, :].float())
        probes = [
            plan.call_probe(config, "float64", mode, seeds=[1], weights=weights, gradient=gradient)
            for mode in ("eval", "train")
        ]
        return params, probes[0], probes[1]

    def judge(self, ctx: Context) -> Verdict:
        with about(self.problem.config(self.params.config)):
            found = self.compare(ctx)
        if found is not None:
            return found
        fault = None
        if self.placement is not None:  # judged on its own config, named in what it finds
            with about(self.problem.config(self.placement[0].config)):
                fault = self.placement_fault(ctx, *self.placement)
        with about(self.problem.config(self.params.config)):
            return self.at_full_dropout(ctx, fault)

    def compare(self, ctx: Context) -> Verdict | None:
        """A failure in eval and train mode, or in the dropout attributes; else None."""
        first, second = ctx.output(self.eval, 0), ctx.output(self.eval, 1)
        if not close(first, second, atol=0, rtol=0):
            return Verdict(
                CheckStatus.failed,
                "eval mode is not deterministic: dropout is active "
                "in eval mode (use nn.Dropout or F.dropout(..., training=self.training))",
            )
        without = ctx.output(self.off, 0)
        if not close(first, without, atol=1e-6, rtol=1e-5):
            return Verdict(
                CheckStatus.failed,
                f"in eval mode, dropout={self.p} changes the output (compared with dropout=0 and "
                "the same weights): dropout must be the identity in eval mode",
            )
        if torch.equal(ctx.output(self.train, 0), ctx.output(self.train, 1)):
            return Verdict(
                CheckStatus.failed,
                f"train mode with dropout={self.p} gave the same "
                "output twice: dropout is never applied",
            )
        inspect = ctx.result(self.eval).data.inspect
        for name in self.params.attributes:
            value = inspect.attrs.get(name) if inspect else None
            p = value.get("p") if isinstance(value, dict) else value  # or a float for F.dropout
            if not isinstance(p, float) or abs(p - self.p) > 1e-12:
                found = own(str(value), public_attr(value, self.p))
                return Verdict(
                    CheckStatus.failed,
                    f"attribute {name} should be nn.Dropout({self.p}), found {found}",
                )
        return None

    def at_full_dropout(self, ctx: Context, fault: str | None) -> Verdict:
        """Where dropout acts: the placement's `fault` if any, else the output at p = 1."""
        got_full = ctx.output(self.full, 0)
        want_full = ctx.reference(self.full).output(0, 0)
        assert want_full is not None
        if fault is None and not close(got_full, want_full, atol=1e-5, rtol=1e-4):
            fault = (
                "with dropout=1.0 in train mode the output differs from the reference's: "
                "dropout must apply to the attention weights after the softmax"
            )
        if fault is not None:
            load = ctx.result(self.full).data.load  # the same names in every probe
            if load is not None and not load.ok:
                found = load.summary(ctx.names, ctx.sizes(self.full))
                fault = (  # the parameters the grader could not set may be the cause
                    f"the grader's weights could not be loaded by name ({found}): a parameter "
                    "mistake, which keeps the grader from checking where dropout acts"
                )
            return Verdict(CheckStatus.failed, fault)
        where = ", whole heads at T = 1" if self.placement else ""
        return passed(f"deterministic in eval, random in train (p={self.p}){where}")

    def placement_fault(
        self, ctx: Context, params: PlacementParams, eval: str, train: str
    ) -> str | None:
        config = self.problem.config(params.config)
        assert config.init is not None
        heads = int(config.init[params.heads_from]) if params.heads_from else 1
        want, got = ctx.output(eval), ctx.output(train)
        expected = ctx.reference(eval).output(0, 0)
        assert expected is not None
        if got.shape != expected.shape or want.shape != expected.shape:
            return (
                f"at T = 1 the output has shape {shape_text(got.shape)} in train mode and "
                f"{shape_text(want.shape)} in eval mode, expected {shape_text(expected.shape)}"
            )
        context = None
        if params.projection is not None:
            name = f"param:{params.projection}.weight"
            grads = [ctx.gradient(probe, name) for probe in (eval, train)]  # shaped as wanted
            if grads[0] is None or grads[1] is None:
                return (
                    f"at T = 1, {params.projection}.weight gets no gradient: the output does not "
                    f"go through {params.projection}"
                )
            context = ratios(grads[1], grads[0], heads)
        p = float(config.init[self.params.argument])
        return placement_fault(
            ratios(got, want, heads), context, p, params.resid, params.projection
        )


class GradientParams(ConfigParams):
    atol: float = 1e-4
    rtol: float = 1e-3


@register(CheckId.gradients)
class Gradients(Check[GradientParams]):
    """Gradients reach the input and every parameter, and match the reference's."""

    def prepare(self, plan: Plan) -> None:
        self.probes = {
            c.id: (plan.call_probe(c), plan.call_probe(c, backward=True)) for c in self.configs()
        }

    def judge(self, ctx: Context) -> Verdict:
        for config_id, (forward, probe) in self.probes.items():
            with about(self.problem.config(config_id)):
                ctx.output(forward, finite=False)  # what is differentiated has the right form
                grads = {
                    n: ctx.gradient(probe, n) for n in ctx.reference(probe).data.calls[0].grads
                }
            for name, got in grads.items():
                label = gradient_label(name)
                want = ctx.reference(probe).grad(0, name)
                if want is None:
                    continue
                if got is None:
                    return Verdict(
                        CheckStatus.failed,
                        f"{config_text(self.problem.config(config_id))}: no gradient reaches "
                        f"{label} (detached, or not used in forward)",
                    )
                if not close(got, want, atol=self.params.atol, rtol=self.params.rtol):
                    diff = (got.double() - want.double()).abs()
                    return Verdict(
                        CheckStatus.failed,
                        f"{config_text(self.problem.config(config_id))}: gradient of {label} "
                        f"differs from the reference by {own_value(float(diff.max()))} at "
                        f"{locate(diff, None)}",
                    )
        return passed("input and parameter gradients match")
