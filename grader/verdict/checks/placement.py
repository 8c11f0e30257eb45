"""Where dropout acts, read from one token.

At T = 1 each head attends to one key with weight 1, so dropping that weight zeroes the head's
whole context vector and keeping it scales the whole vector by 1/(1-p); dropout on the context
vectors or on the output zeroes channels one by one. Train-mode values divided by eval-mode
values therefore show, head by head, which of the two happened.
"""

from __future__ import annotations

import torch

from grader.sandboxing.owntext import own_value

TOLERANCE = 1e-6


def ratios(train: torch.Tensor, eval: torch.Tensor, heads: int) -> torch.Tensor:
    """Train over eval values as (rows, heads, head_dim); NaN where the eval value is about 0.
    Rows that are 0 throughout (every head or every output channel dropped) say nothing about
    placement and are left out."""
    train, eval = train.double().flatten(0, -2), eval.double().flatten(0, -2)
    small = eval.abs() <= TOLERANCE * eval.abs().max().clamp_min(1e-300)
    ratio = torch.where(small, torch.full_like(eval, float("nan")), train / eval)
    kept_rows = ~((ratio.abs() <= TOLERANCE) | ratio.isnan()).all(dim=-1)
    kept: torch.Tensor = ratio[kept_rows].unflatten(-1, (heads, -1))
    return kept


def mixed_head(ratio: torch.Tensor) -> int | None:
    """The first head of which one row has both zeroed and kept channels."""
    zero = ratio.abs() <= TOLERANCE
    live = ~zero & ~ratio.isnan()
    mixed = (zero.any(dim=-1) & live.any(dim=-1)).any(dim=0)
    return int(mixed.nonzero()[0]) if bool(mixed.any()) else None


def heads_dropped(ratio: torch.Tensor) -> bool:
    """Whether some head's whole context is zero in a row where others are not."""
    zero = (ratio.abs() <= TOLERANCE) | ratio.isnan()
    return bool(zero.all(dim=-1).any())


def off_scale(ratio: torch.Tensor, factor: float) -> float | None:
    """The median train/eval ratio among kept values that are not scaled by `factor`."""
    live = ratio[(ratio.abs() > TOLERANCE) & ~ratio.isnan()]
    off = live[(live - factor).abs() > TOLERANCE * factor]
    return float(off.median()) if off.numel() else None


def placement_fault(
    output: torch.Tensor,
    context: torch.Tensor | None,
    p: float,
    resid: bool,
    projection: str | None,
) -> str | None:
    """Why train mode at T = 1 is not dropout on the attention weights, or None if it is.

    `output` and `context` are `ratios` of the output (through an identity projection) and,
    where there is a projection, of its input read from its weight gradient. With `resid`
    a second dropout acts on the output after the projection."""
    factor = (1 - p) ** (-2 if resid else -1)
    if context is None:
        head = mixed_head(output)
        if head is not None:
            whose = "the output" if output.shape[1] == 1 else f"head {head}'s output"
            return (
                f"at T = 1, dropout zeroed some channels of {whose} and kept others: it acts on "
                "the context vectors (att @ v), not on the attention weights (dropping a head's "
                "only weight zeroes its whole row)"
            )
    else:
        head = mixed_head(context)
        if head is not None:
            return (
                f"at T = 1, dropout zeroed some channels of head {head}'s context vector (the "
                f"input of {projection}) and kept others: it acts on the context vectors "
                "(att @ v), not on the attention weights (dropping a head's only weight zeroes "
                "its whole row)"
            )
        head = None if resid else mixed_head(output)
        if head is not None:
            found = (
                f"at T = 1, dropout zeroed single channels of the output of {projection} and "
                f"none of any head's context vector (its input)"
            )
            if heads_dropped(context):
                return (
                    f"{found}, where it dropped whole heads: a second dropout acts on the "
                    f"output of {projection}, which must not be dropped"
                )
            return (
                f"{found}, where it dropped no head: it acts on the output of {projection}, "
                "not on the attention weights"
            )
    scale = off_scale(output, factor)
    if scale is None:
        return None
    expected = f"expected {factor:.3g} = 1/(1-p)" + ("^2" if resid else "")
    if not heads_dropped(output if context is None else context):
        if resid:
            return (
                f"at T = 1, no head's context vector is ever dropped and kept outputs are scaled "
                f"by {own_value(scale)} ({expected}): only the output is dropped; attn_dropout "
                "must act on the attention weights"
            )
        return (
            f"at T = 1, no head's context vector is ever dropped (kept outputs scaled by "
            f"{own_value(scale)}, {expected}): dropout does not act on the attention weights "
            "after the softmax"
        )
    if resid:
        expected += ": attn_dropout on the weights, then resid_dropout on the output"
    return f"at T = 1, kept outputs are scaled by {own_value(scale)}, {expected}"
