import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out is not a multiple of num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_size = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        full = torch.ones(context_length, context_length, dtype=torch.bool)
        self.register_buffer("mask", ~torch.tril(full))

    def forward(self, x):
        batch, n, _ = x.shape
        heads = []
        for h in range(self.num_heads):
            lo, hi = h * self.head_size, (h + 1) * self.head_size
            qh = self.W_query(x)[:, :, lo:hi]
            kh = self.W_key(x)[:, :, lo:hi]
            vh = self.W_value(x)[:, :, lo:hi]
            s = torch.matmul(qh, kh.transpose(1, 2)) / math.sqrt(self.head_size)
            s = torch.where(self.mask[:n, :n], torch.full_like(s, -1e9), s)
            p = self.dropout(torch.softmax(s, dim=-1))
            heads.append(torch.matmul(p, vh))
        return self.out_proj(torch.cat(heads, dim=2))
