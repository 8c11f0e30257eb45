# expect-fail: matches the reference (float32)
# expect-diagnosis: qkv_order
"""Q and K unpacked in the wrong order from the fused projection."""

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

    def heads(self, t):
        B, T, _ = t.shape
        return t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, mask=None):
        B, T, C = x.shape
        k, q, v = map(self.heads, self.W_qkv(x).chunk(3, dim=-1))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        out = (self.dropout(attn) @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.W_o(out), attn
