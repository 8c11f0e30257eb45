# expect-fail: dropout: off in eval, on the attention weights in train
"""Each head drops channels of its context vectors att @ v instead of its attention weights."""

import math

import torch
from torch import nn


class CausalHead(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        future = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1)
        self.register_buffer("mask", future)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)  # each (B, T, d_out)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])  # (B, T, T)
        att = att.masked_fill(self.mask[:T, :T], float("-inf")).softmax(dim=-1)
        return self.dropout(att @ v)  # (B, T, d_out)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            CausalHead(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)  # (B, T, nh * d_out)
