"""Reference: causal multi-head attention, all heads from one projection per Q, K and V."""

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
    ):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"num_heads={num_heads} does not divide d_out={d_out}")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)  # mixes the heads' outputs
        self.dropout = nn.Dropout(dropout)
        future = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1)
        self.register_buffer("mask", future)  # True above the diagonal: may not attend

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        nh, hd = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hd).transpose(1, 2)  # (B, nh, T, hd)
        k = self.W_key(x).view(B, T, nh, hd).transpose(1, 2)  # (B, nh, T, hd)
        v = self.W_value(x).view(B, T, nh, hd).transpose(1, 2)  # (B, nh, T, hd)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)  # (B, nh, T, T)
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        att = self.dropout(att.softmax(dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, nh * hd)  # (B, T, d_out)
        return self.out_proj(y)
