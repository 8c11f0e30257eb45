import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        ones = torch.ones(context_length, context_length)
        self.register_buffer("mask", torch.triu(ones, diagonal=1).bool())

    def _split(self, t):
        B, T, _ = t.shape
        if self.num_heads == 1:  # nothing to split: skip the reshape/transpose
            return t.unsqueeze(1)
        return t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = (self._split(W(x)) for W in (self.W_query, self.W_key, self.W_value))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        att = self.dropout(att.masked_fill(self.mask[:T, :T], float("-inf")).softmax(-1))
        y = (att @ v).transpose(1, 2).reshape(B, T, -1)
        return self.out_proj(y)
