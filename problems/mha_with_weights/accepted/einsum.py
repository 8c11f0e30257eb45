import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("d_model must be a multiple of num_heads")
        self.h = num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B, T, C = x.shape
        d = C // self.h
        q = self.W_q(x).reshape(B, T, self.h, d)
        k = self.W_k(x).reshape(B, T, self.h, d)
        v = self.W_v(x).reshape(B, T, self.h, d)
        scores = torch.einsum("bihd,bjhd->bhij", q, k) / d**0.5
        if mask is not None:
            scores = torch.where(mask, torch.tensor(float("-inf"), dtype=scores.dtype), scores)
        weights = scores.softmax(-1)
        dropped = F.dropout(weights, self.dropout.p, training=self.training)
        out = torch.einsum("bhij,bjhd->bihd", dropped, v).reshape(B, T, C)
        return self.W_o(out), weights
