"""Attention patterns for feedback, the candidate's beside the reference's: the weights a
module returned, or how each of its output tokens moves when one input token is changed.

They are what attention tutorials draw to explain a mask bug, drawn for the candidate's own
module. Small by design: batch 0, the first HEADS heads, the first TOKENS tokens.
"""

from __future__ import annotations

import math

import torch

from grader.reports.models import AttentionPattern, Grid

HEADS = 4
TOKENS = 16


def grid(values: torch.Tensor) -> Grid:
    """A (queries, keys) tensor as rows of rounded floats, None where not finite."""
    rows: list[list[float]] = values.double().tolist()
    return [[round(v, 4) if math.isfinite(v) else None for v in row] for row in rows]


def head_grids(weights: torch.Tensor) -> list[Grid]:
    """Batch 0 of (B, nh, T, T) or (B, T, T) weights, as a grid per head shown."""
    first = weights.detach()[0]
    heads = first if first.dim() == 3 else first.unsqueeze(0)
    return [grid(h[:TOKENS, :TOKENS]) for h in heads[:HEADS]]


def weights_pattern(got: torch.Tensor, expected: torch.Tensor, config: str) -> AttentionPattern:
    """The weights the candidate's module returned and the reference's, on the same input."""
    return AttentionPattern(
        kind="weights", config=config, got=head_grids(got), expected=head_grids(expected)
    )


def influence(base: torch.Tensor, moved: list[torch.Tensor]) -> torch.Tensor:
    """(queries, keys): how far output token i moved when input token j was changed (the j-th
    of `moved`), over every batch and channel, relative to the largest move."""
    columns = [(m.double() - base.double()).abs().transpose(0, 1).flatten(1) for m in moved]
    spread = torch.stack([c.amax(dim=1) for c in columns], dim=1)
    largest = float(spread.max()) if spread.numel() else 0.0
    return spread / largest if largest > 0 else spread


def influence_pattern(
    got: tuple[torch.Tensor, list[torch.Tensor]],
    expected: tuple[torch.Tensor, list[torch.Tensor]],
    config: str,
) -> AttentionPattern:
    """The token-to-token influence of the candidate's module and of the reference, each given
    as its output on the input and on the input with each token changed in turn."""
    return AttentionPattern(
        kind="influence",
        config=config,
        got=[grid(influence(*got))],
        expected=[grid(influence(*expected))],
    )
