# expect-fail: the mask is a registered buffer named mask
"""The causal mask registered as `tril` (as in makemore's Head), where the contract says `mask`."""

import math

import torch
from torch import nn


class CausalAttention(nn.Module):
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
        att = self.dropout(att.softmax(dim=-1))
        return att @ v  # (B, T, d_out)
