"""Problem 5: causal multi-head attention with weight splits."""

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
    ):
        super().__init__()
        # W_query, W_key, W_value, out_proj, dropout, and a causal mask buffer `mask`
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d_in) -> (B, T, d_out)."""
        raise NotImplementedError
