import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        mask = torch.zeros(context_length, context_length, dtype=torch.bool)
        for i in range(context_length):
            for j in range(i + 1, context_length):
                mask[i, j] = True
        self.register_buffer("mask", mask)

    def forward(self, x):
        n = x.shape[1]
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        s = torch.matmul(queries, keys.transpose(1, 2)) / math.sqrt(self.d_out)
        s = torch.where(self.mask[:n, :n], torch.full_like(s, -1e9), s)
        p = torch.softmax(s, dim=-1)
        p = self.dropout(p)
        return torch.matmul(p, values)
