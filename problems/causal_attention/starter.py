"""Problem 2: single-head causal attention with dropout."""

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(
        self, d_in: int, d_out: int, context_length: int, dropout: float, qkv_bias: bool = False
    ):
        super().__init__()
        # W_query, W_key, W_value, dropout, and a causal mask buffer `mask`
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d_in) -> (B, T, d_out)."""
        raise NotImplementedError
