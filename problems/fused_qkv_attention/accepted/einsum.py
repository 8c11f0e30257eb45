import torch
from torch import nn


class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("num_heads does not divide d_model")
        self.n_heads = num_heads
        self.W_qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B, T, C = x.shape
        h, d = self.n_heads, C // self.n_heads
        q, k, v = self.W_qkv(x).reshape(B, T, 3, h, d).unbind(dim=2)  # each (B, T, h, d)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / d**0.5
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", self.dropout(probs), v)
        return self.W_o(out.reshape(B, T, C)), probs
