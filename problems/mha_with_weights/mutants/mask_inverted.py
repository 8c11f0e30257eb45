# expect-fail: honours padding, per-head and causal masks
# expect-fail: masked positions get zero weight
# expect-diagnosis: mask_semantics_inverted
"""The Annotated-Transformer convention masked_fill(mask == 0, ...): True read as "may attend"."""

import math

from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        assert d_model % num_heads == 0
        self.h = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B = x.size(0)
        q, k, v = [
            lin(x).view(B, -1, self.h, self.d_k).transpose(1, 2)
            for lin in (self.W_q, self.W_k, self.W_v)
        ]
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
        out = self.dropout(p_attn) @ v
        out = out.transpose(1, 2).contiguous().view(B, -1, self.h * self.d_k)
        return self.W_o(out), p_attn
