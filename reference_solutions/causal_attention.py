"""Reference: single-head causal attention with dropout on the attention weights."""

import math

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(
        self, d_in: int, d_out: int, context_length: int, dropout: float, qkv_bias: bool = False
    ):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        future = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1)
        self.register_buffer("mask", future)  # True above the diagonal: may not attend

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)  # each (B, T, d_out)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])  # (B, T, T)
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))  # token t sees tokens <= t
        att = self.dropout(att.softmax(dim=-1))
        return att @ v  # (B, T, d_out)
