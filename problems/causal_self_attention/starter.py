"""Problem 9: GPT-2 style causal self-attention with one fused Q, K, V projection."""

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block_size: int, dropout: float = 0.0):
        super().__init__()
        # qkv, proj, attn_dropout, resid_dropout, n_head, head_dim, and a causal mask buffer `mask`
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> (B, T, C)."""
        raise NotImplementedError
