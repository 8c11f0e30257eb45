"""Loops over the heads with map and a lambda, which no loop statement shows: the count of
torch functions one call runs grows with the head count."""
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.num_heads, self.head_dim = num_heads, d_out // num_heads
        ones = torch.ones(context_length, context_length)
        self.register_buffer("mask", torch.triu(ones, diagonal=1).bool())

    def head(self, q, k, v, h, T):
        cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
        s = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(self.head_dim)
        s = s.masked_fill(self.mask[:T, :T], float("-inf"))
        return self.dropout(torch.softmax(s, dim=-1)) @ v[..., cols]

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        outs = map(lambda h: self.head(q, k, v, h, T), range(self.num_heads))
        return self.out_proj(torch.cat(list(outs), dim=-1))
