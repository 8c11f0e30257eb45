import math

import torch
import torch.nn.functional as F
from torch import nn

from split_heads import merge_heads, split_heads


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be divisible by num_heads")
        self.n_heads = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        causal = torch.tril(torch.ones(context_length, context_length, dtype=torch.bool))
        self.register_buffer("mask", causal.view(1, 1, context_length, context_length))

    def forward(self, x):
        B, T, _ = x.size()
        C = self.W_query.out_features
        hs = C // self.n_heads
        q = split_heads(self.W_query(x), self.n_heads)
        k = split_heads(self.W_key(x), self.n_heads)
        v = split_heads(self.W_value(x), self.n_heads)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf"))
        att = self.dropout(F.softmax(att, dim=-1))
        y = merge_heads(att @ v)
        return self.out_proj(y)
