# expect-fail: matches the reference (float32)
# expect-diagnosis: qkv_heads_first
"""The fused projection is split into heads first, then each head's 3 * hd channels into q, k, v."""

import math

import torch
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
        qkv = self.W_qkv(x).reshape(B, T, self.num_heads, 3 * self.head_dim)
        qkv = qkv.permute(0, 2, 1, 3)  # (B, nh, T, 3 * hd)
        q, k, v = qkv.chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        out = (self.dropout(attn) @ v).permute(0, 2, 1, 3).reshape(B, T, C)
        return self.W_o(out), attn
