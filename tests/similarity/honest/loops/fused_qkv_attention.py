import math

import torch
import torch.nn as nn


class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("num_heads must divide d_model")
        self.d_model = d_model
        self.num_heads = num_heads
        self.W_qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        size = self.d_model // self.num_heads
        fused = self.W_qkv(x)
        groups = []
        for part in range(3):
            block = fused[:, :, part * self.d_model:(part + 1) * self.d_model]
            groups.append(torch.stack([block[:, :, h * size:(h + 1) * size]
                                       for h in range(self.num_heads)], dim=1))
        queries, keys, values = groups
        s = torch.matmul(queries, keys.transpose(2, 3)) / math.sqrt(size)
        if mask is not None:
            s = torch.where(mask, torch.full_like(s, float("-inf")), s)
        p = torch.softmax(s, dim=-1)
        y = torch.matmul(self.dropout(p), values)
        y = torch.cat([y[:, h] for h in range(self.num_heads)], dim=-1)
        return self.W_o(y), p
