"""Problem 3: multi-head attention as a stack of single causal heads."""

import torch
from torch import nn


class MultiHeadAttentionWrapper(nn.Module):
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
        # heads: an nn.ModuleList of num_heads distinct causal heads (as in causal_attention)
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d_in) -> (B, T, num_heads * d_out)."""
        raise NotImplementedError
