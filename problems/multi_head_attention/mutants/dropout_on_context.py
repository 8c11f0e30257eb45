# expect-fail: dropout: off in eval, on the attention weights in train
"""Dropout on the merged context vectors, before out_proj, instead of on the weights."""

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        future = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1)
        self.register_buffer("mask", future)

    def forward(self, x):
        B, T, _ = x.shape
        nh, hd = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hd).transpose(1, 2)  # (B, nh, T, hd)
        k = self.W_key(x).view(B, T, nh, hd).transpose(1, 2)  # (B, nh, T, hd)
        v = self.W_value(x).view(B, T, nh, hd).transpose(1, 2)  # (B, nh, T, hd)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)  # (B, nh, T, T)
        att = att.masked_fill(self.mask[:T, :T], float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, nh * hd)  # (B, T, d_out)
        return self.out_proj(self.dropout(y))
