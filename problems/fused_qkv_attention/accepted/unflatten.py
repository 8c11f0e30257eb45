import math

from torch import nn


class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.W_qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        qkv = self.W_qkv(x).unflatten(-1, (3, self.num_heads, self.head_dim))  # (B, T, 3, nh, hd)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each (B, nh, T, hd)
        scores = q @ k.mT / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores - 1e9 * mask.to(scores.dtype)  # additive mask
        weights = scores.softmax(dim=-1)
        out = (self.dropout(weights) @ v).permute(0, 2, 1, 3).flatten(2)
        return self.W_o(out), weights
