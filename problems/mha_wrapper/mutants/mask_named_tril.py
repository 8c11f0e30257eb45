# expect-fail: each head's mask is a registered buffer named mask
"""Each head registers its causal mask as `tril` (as in makemore's Head), not `mask`."""

import math

import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)  # each (B, T, d_out)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])  # (B, T, T)
        att = att.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        return self.dropout(att.softmax(dim=-1)) @ v  # (B, T, d_out)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            Head(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)  # (B, T, nh * d_out)
