import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("num_heads must divide d_model")
        self.num_heads = num_heads
        self.size = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def heads(self, t):
        return torch.stack([t[:, :, h * self.size:(h + 1) * self.size]
                            for h in range(self.num_heads)], dim=1)

    def forward(self, x, mask=None):
        queries = self.heads(self.W_q(x))
        keys = self.heads(self.W_k(x))
        values = self.heads(self.W_v(x))
        s = torch.matmul(queries, keys.transpose(2, 3)) / math.sqrt(self.size)
        if mask is not None:
            s = torch.where(mask, torch.full_like(s, float("-inf")), s)
        p = torch.softmax(s, dim=-1)
        y = torch.matmul(self.dropout(p), values)
        y = torch.cat([y[:, h] for h in range(self.num_heads)], dim=-1)
        return self.W_o(y), p
