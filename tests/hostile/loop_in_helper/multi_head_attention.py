import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    """The loop over the heads moved into a helper that forward calls."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.num_heads, self.head_dim = num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(1).bool())

    def heads(self, q, k, v, T):
        outs = []
        for h in range(self.num_heads):
            cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
            att = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(self.head_dim)
            att = self.dropout(att.masked_fill(self.mask[:T, :T], float("-inf")).softmax(-1))
            outs.append(att @ v[..., cols])
        return torch.cat(outs, dim=-1)

    def forward(self, x):
        T = x.shape[1]
        return self.out_proj(self.heads(self.W_query(x), self.W_key(x), self.W_value(x), T))
