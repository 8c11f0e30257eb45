"""Returns the raw scores too: three outputs where two are expected."""

import math

import torch.nn.functional as F
from torch import nn


class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.W_qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B, T, C = x.shape
        q, k, v = self.W_qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        if mask is not None:
            att = att.masked_fill(mask, float("-inf"))
        weights = F.softmax(att, dim=-1)
        y = (self.dropout(weights) @ v).transpose(1, 2).reshape(B, T, C)
        out = self.W_o(y)
        return out, weights, att
