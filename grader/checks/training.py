"""Checks on training behaviour: dropout in train and eval mode, and gradients."""

from __future__ import annotations

import torch
from pydantic import Field

from grader.checks.base import (
    Check,
    ConfigParams,
    Context,
    NoParams,
    Verdict,
    about,
    gradient_label,
    register,
)
from grader.checks.values import passed
from grader.diagnose import close, locate
from grader.plan import Plan
from grader.report import CheckStatus


class DropoutParams(NoParams):
    config: str
    argument: str = "dropout"
    attributes: list[str] = Field(default_factory=list)


@register("dropout")
class Dropout(Check):
    """Eval mode ignores dropout (deterministic, and equal to the same module built with p = 0);
    train mode is random; the dropout sits on the attention weights (with p = 1 the output is
    what the reference gives)."""

    params_model = DropoutParams

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

    def judge(self, ctx: Context) -> Verdict:
        with about(self.params.config):
            return self.compare(ctx)

    def compare(self, ctx: Context) -> Verdict:
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
        got_full = ctx.output(self.full, 0)
        want_full = ctx.reference(self.full).output(0, 0)
        assert want_full is not None
        if not close(got_full, want_full, atol=1e-5, rtol=1e-4):
            return Verdict(
                CheckStatus.failed,
                "with dropout=1.0 in train mode the output differs "
                "from the reference's: dropout must apply to the attention weights "
                "after the softmax",
            )
        inspect = ctx.result(self.eval).data.inspect
        for name in self.params.attributes:
            value = inspect.attrs.get(name) if inspect else None
            p = value.get("p") if isinstance(value, dict) else value  # or a float for F.dropout
            if not isinstance(p, float) or abs(p - self.p) > 1e-12:
                return Verdict(
                    CheckStatus.failed,
                    f"attribute {name} should be nn.Dropout({self.p}), found {value}",
                )
        return passed(f"deterministic in eval, random in train (p={self.p})")


class GradientParams(ConfigParams):
    atol: float = 1e-4
    rtol: float = 1e-3


@register("gradients")
class Gradients(Check):
    """Gradients reach the input and every parameter, and match the reference's."""

    params_model = GradientParams

    def prepare(self, plan: Plan) -> None:
        self.probes = {
            c.id: (plan.call_probe(c), plan.call_probe(c, backward=True)) for c in self.configs()
        }

    def judge(self, ctx: Context) -> Verdict:
        for config_id, (forward, probe) in self.probes.items():
            with about(config_id):
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
                        f"config {config_id}: no gradient reaches "
                        f"{label} (detached, or not used in forward)",
                    )
                if not close(got, want, atol=self.params.atol, rtol=self.params.rtol):
                    diff = (got.double() - want.double()).abs()
                    return Verdict(
                        CheckStatus.failed,
                        f"config {config_id}: gradient of {label} "
                        f"differs from the reference by {float(diff.max()):.3g} at "
                        f"{locate(diff, None)}",
                    )
        return passed("input and parameter gradients match")
