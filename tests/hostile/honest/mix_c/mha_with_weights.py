from __future__ import annotations

from functools import singledispatch

import torch
from torch import nn

from attention import attend
from split_heads import merge_heads, split_heads


@singledispatch
def as_mask(mask, num_heads):
    raise TypeError(f"unsupported mask type {type(mask).__name__}")


@as_mask.register
def _(mask: torch.Tensor, num_heads: int) -> torch.Tensor:
    return mask.bool()


@as_mask.register(type(None))
def _(mask, num_heads):
    return None


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.1) -> None:
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        q = split_heads(self.W_q(x), self.num_heads)
        k = split_heads(self.W_k(x), self.num_heads)
        v = split_heads(self.W_v(x), self.num_heads)
        out, weights = attend(q, k, v, as_mask(mask, self.num_heads), self.dropout)
        return self.W_o(merge_heads(out)), weights
