"""Reference: multi-head attention with one fused [Q | K | V] projection, returning its weights."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"num_heads={num_heads} does not divide d_model={d_model}")
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.W_qkv = nn.Linear(d_model, 3 * d_model, bias=False)  # output channels [Q | K | V]
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        B, T, C = x.shape
        q, k, v = self.W_qkv(x).split(C, dim=2)  # each (B, T, C)
        q = q.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)  # (B, nh, T, hd)
        k = k.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)  # (B, nh, T, hd)
        v = v.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)  # (B, nh, T, hd)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)  # (B, nh, T, T)
        if mask is not None:
            att = att.masked_fill(mask, float("-inf"))  # True = may not attend
        weights = F.softmax(att, dim=-1)  # (B, nh, T, T), rows sum to 1
        y = self.dropout(weights) @ v  # (B, nh, T, hd)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.W_o(y), weights
