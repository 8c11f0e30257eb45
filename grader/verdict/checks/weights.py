"""Checks on returned attention weights: they are probabilities, and the mask holds."""

from __future__ import annotations

import torch

from grader.reports.models import AttentionPattern, CheckStatus
from grader.sandboxing.owntext import own_row_sum, own_value
from grader.specs.problem import CheckId, CheckSpec, Config, ProblemSpec
from grader.verdict.checks.base import (
    Check,
    ConfigParams,
    Context,
    Verdict,
    about,
    config_text,
    register,
)
from grader.verdict.checks.returned import shape_text
from grader.verdict.checks.values import passed
from grader.verdict.diagnose import locate
from grader.verdict.patterns import weights_pattern
from grader.verdict.plan import Plan


def require_masks(configs: list[Config]) -> None:
    missing = [c.id for c in configs if c.mask is None]
    if missing:
        raise ValueError(f"configs without a mask: {', '.join(missing)}")


class WeightsParams(ConfigParams):
    output: int = 1
    tolerance: float = 1e-5


class WeightsCheck(Check[WeightsParams]):
    """Reads the weights a module returns (output `output`) in eval mode, per config."""

    def prepare(self, plan: Plan) -> None:
        self.probes = {c.id: plan.call_probe(c) for c in self.configs()}

    def weights(self, ctx: Context, config_id: str) -> torch.Tensor:
        """The candidate's weights, shaped as the reference's (NaN and inf kept), in float64."""
        with about(self.problem.config(config_id)):
            return ctx.output(self.probes[config_id], 0, self.params.output, finite=False).double()

    def pattern(self, ctx: Context, config: Config, got: torch.Tensor) -> AttentionPattern:
        """The candidate's weights `got` beside the reference's, for the feedback."""
        want = ctx.expected(self.probes[config.id], 0, self.params.output)
        return weights_pattern(got, want, config_text(config))


@register(CheckId.weights_sum_to_one)
class WeightsSumToOne(WeightsCheck):
    """In eval mode the weights are a softmax over the keys: non-negative, rows sum to 1."""

    def judge(self, ctx: Context) -> Verdict:
        tol = self.params.tolerance
        for config in self.configs():
            w = self.weights(ctx, config.id)
            if not bool(torch.isfinite(w).all()):
                return Verdict(
                    CheckStatus.failed,
                    f"{config_text(config)}: the weights hold inf or NaN (a fully masked row, or "
                    "scores returned before the softmax)",
                    pattern=self.pattern(ctx, config, w),
                )
            if bool((w < -tol).any()) or bool((w > 1 + tol).any()):
                return Verdict(
                    CheckStatus.failed,
                    f"{config_text(config)}: weights outside [0, 1] (max "
                    f"{own_value(float(w.max()))}, min {own_value(float(w.min()))}): return the "
                    "softmax, not the raw scores",
                    pattern=self.pattern(ctx, config, w),
                )
            rows = w.sum(dim=-1)
            if not torch.allclose(rows, torch.ones_like(rows), atol=tol, rtol=0):
                where = locate((rows - 1).abs().unsqueeze(-1), None)
                hint = ""
                columns = w.sum(dim=-2)
                if torch.allclose(columns, torch.ones_like(columns), atol=tol, rtol=0):
                    hint = ": the softmax runs over the queries (dim -2), not the keys (dim -1)"
                total = float(rows.flatten()[(rows - 1).abs().argmax()])
                return Verdict(
                    CheckStatus.failed,
                    f"{config_text(config)}: a row of weights sums to {own_row_sum(total)} "
                    f"({where}){hint}",
                    pattern=self.pattern(ctx, config, w),
                )
        return passed("every row of weights sums to 1")


@register(CheckId.mask_respected)
class MaskRespected(WeightsCheck):
    """Positions the bool mask blocks (True = may not attend) get zero weight."""

    def __init__(self, spec: CheckSpec, problem: ProblemSpec) -> None:
        super().__init__(spec, problem)
        require_masks(self.configs())

    def prepare(self, plan: Plan) -> None:
        super().prepare(plan)
        self.masks = {
            c.id: plan.tensors[plan.mask_kwargs(c)["mask"]["tensor"]] for c in self.configs()
        }

    def judge(self, ctx: Context) -> Verdict:
        tol = self.params.tolerance
        for config in self.configs():
            w = self.weights(ctx, config.id)
            blocked = torch.broadcast_to(self.masks[config.id], w.shape)
            leaks = blocked & ~(w.abs() <= tol)  # NaN leaks too
            if not bool(leaks.any()):
                continue
            shape = shape_text(list(self.masks[config.id].shape))
            if bool((w.abs() <= tol)[~blocked].all()):
                return Verdict(
                    CheckStatus.failed,
                    f"{config_text(config)} ({config.mask} mask {shape}): only blocked positions "
                    "get weight: the mask is inverted (True means 'may not attend')",
                    pattern=self.pattern(ctx, config, w),
                )
            value = float(w[tuple(int(i) for i in leaks.nonzero()[0])])
            hint = (
                "fill blocked scores with -inf before the softmax (True means 'may not attend')"
                if 0 < value <= 1
                else "return the softmax, which is 0 where blocked"
            )
            return Verdict(
                CheckStatus.failed,
                f"{config_text(config)} ({config.mask} mask {shape}): a blocked position gets "
                f"weight {own_value(value)} ({locate(leaks.double(), None)}): {hint}",
                pattern=self.pattern(ctx, config, w),
            )
        return passed("blocked positions get zero weight")


class HiddenKeysParams(ConfigParams):
    tolerance: float = 1e-6
    arg: int = 0


@register(CheckId.masked_keys_ignored)
class MaskedKeysIgnored(Check[HiddenKeysParams]):
    """Changing the tokens a mask hides from every query leaves the other tokens' outputs
    (and their weights) unchanged."""

    def __init__(self, spec: CheckSpec, problem: ProblemSpec) -> None:
        super().__init__(spec, problem)
        require_masks(self.configs())

    def prepare(self, plan: Plan) -> None:
        self.probes: dict[str, tuple[str, torch.Tensor]] = {}
        for config in self.configs():
            args = plan.args(config)
            position = self.params.arg
            tensor = plan.tensor_argument(args, position)
            x = plan.tensors[tensor["tensor"]]
            mask = plan.tensors[plan.mask_kwargs(config)["mask"]["tensor"]]
            batch, tokens = x.shape[0], x.shape[1]
            heads = mask.shape[-3] if mask.dim() == 4 else 1
            full = torch.broadcast_to(mask, (batch, heads, tokens, tokens))
            hidden = full.all(dim=1).all(dim=1)  # (B, T): key hidden from every query and head
            if not bool(hidden.any()):
                raise ValueError(f"{config_text(config)}: its mask hides no key from every query")
            noise = plan.tensors[plan.tensor(f"noise/{config.id}", list(x.shape), 3.0)]
            perturbed = x + noise * hidden[:, :, None]
            changed = list(args)
            changed[position] = {
                **tensor,
                "tensor": plan.put(f"hidden_keys/{config.id}", perturbed),
            }
            probe = plan.call_probe(config, args=args, more_args=[changed])
            self.probes[config.id] = (probe, ~hidden)

    def judge(self, ctx: Context) -> Verdict:
        for config_id, (probe, kept) in self.probes.items():
            count = len(ctx.reference(probe).data.calls[0].outputs)
            for index in range(count):
                with about(self.problem.config(config_id)):
                    before, after = ctx.output(probe, 0, index), ctx.output(probe, 1, index)
                    if ctx.one_number(probe, 0, index):
                        return Verdict(
                            CheckStatus.failed,
                            f"{config_text(self.problem.config(config_id))}: output {index} is "
                            "one number everywhere: unchanged by any key, it shows nothing of "
                            "a mask",
                        )
                a, b = query_rows(before, kept), query_rows(after, kept)
                change = (a - b).abs()
                if float(change.max()) > self.params.tolerance:
                    return Verdict(
                        CheckStatus.failed,
                        f"{config_text(self.problem.config(config_id))}: "
                        f"changing only the tokens the mask hides changed "
                        f"output {index} of the other tokens by {own_value(float(change.max()))}: "
                        "masked keys must get zero weight",
                    )
        return passed("masked keys do not matter")


def query_rows(t: torch.Tensor, kept: torch.Tensor) -> torch.Tensor:
    """The rows of the kept (batch, token) queries of a (B, T, C) or (B, nh, T, T) output."""
    return (t if t.dim() == 3 else t.transpose(1, 2))[kept].double()
