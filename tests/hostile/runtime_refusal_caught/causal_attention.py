"""Tries the forbidden fused kernel first and falls back to its own attention when that fails:
the values are right, but the forbidden call was made (and refused) all the same."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        ones = torch.ones(context_length, context_length)
        self.register_buffer("mask", torch.triu(ones, diagonal=1).bool())

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        try:
            p = self.dropout.p if self.training else 0.0
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p)
        except RuntimeError:
            scores = q @ k.transpose(1, 2) / math.sqrt(k.shape[-1])
            scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
            return self.dropout(torch.softmax(scores, dim=-1)) @ v
