import torch
import torch.nn.functional as F
from torch import nn


class CausalAttention(nn.Module):
    """Additive -inf mask; Q, K and V in one matmul, split with chunk."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        future = torch.full((1, context_length, context_length), float("-inf")).triu(1)
        self.register_buffer("mask", future)

    def forward(self, x):
        T = x.shape[-2]
        layers = (self.W_query, self.W_key, self.W_value)
        weight = torch.cat([layer.weight for layer in layers])
        bias = None
        if self.W_query.bias is not None:
            bias = torch.cat([layer.bias for layer in layers])
        q, k, v = F.linear(x, weight, bias).chunk(3, dim=-1)
        att = q @ k.permute(0, 2, 1) / k.shape[-1] ** 0.5 + self.mask[:, :T, :T]
        att = F.dropout(att.softmax(dim=-1), self.dropout.p, training=self.training)
        return att @ v
