"""Problem 10: causal self-attention with a fused SDPA fast path and a manual twin."""

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(
        self, n_embd: int, n_head: int, block_size: int, dropout: float = 0.0, flash: bool = True
    ):
        super().__init__()
        # as causal_self_attention (qkv, proj, attn_dropout, resid_dropout, n_head, head_dim,
        # a causal mask buffer `mask`), plus the attribute flash
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> (B, T, C); F.scaled_dot_product_attention when self.flash is True."""
        raise NotImplementedError
