import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    """Heads by unflatten/permute, an additive -inf mask, dropout through F.dropout."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"{num_heads} heads do not divide d_out={d_out}")
        self.num_heads = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = dropout
        future = torch.full((context_length, context_length), float("-inf")).triu(1)
        self.register_buffer("mask", future[None, None])

    def forward(self, x):
        T = x.shape[1]
        q, k, v = (
            layer(x).unflatten(-1, (self.num_heads, -1)).permute(0, 2, 1, 3)
            for layer in (self.W_query, self.W_key, self.W_value)
        )  # each (B, nh, T, hd)
        att = q @ k.permute(0, 1, 3, 2) * q.shape[-1] ** -0.5 + self.mask[..., :T, :T]
        att = F.dropout(att.softmax(dim=-1), p=self.dropout, training=self.training)
        y = (att @ v).permute(0, 2, 1, 3).flatten(2)  # (B, T, d_out)
        return self.out_proj(y)
