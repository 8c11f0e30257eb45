import torch
import torch.nn.functional as F
from torch import nn


class CausalHead(nn.Module):
    """Additive float mask with -inf above the diagonal."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        additive = torch.zeros(context_length, context_length)
        additive[torch.ones_like(additive, dtype=torch.bool).triu(1)] = float("-inf")
        self.register_buffer("mask", additive)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        att = q @ k.permute(0, 2, 1) * k.shape[-1] ** -0.5 + self.mask[:T, :T]
        return F.dropout(att.softmax(-1), self.dropout.p, self.training) @ v


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            CausalHead(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)
        )

    def forward(self, x):
        stacked = torch.stack([head(x) for head in self.heads], dim=2)  # (B, T, nh, d_out)
        return stacked.flatten(start_dim=2)  # head 0's channels first
