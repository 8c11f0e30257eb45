import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.num_heads = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        tri = torch.tril(torch.ones(context_length, context_length))
        self.register_buffer("mask", tri == 0)

    def forward(self, x):
        b, t, _ = x.shape
        split = lambda y: y.view(b, t, self.num_heads, -1).transpose(1, 2)  # noqa
        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        att = (q @ k.transpose(-2, -1)) * k.size(-1) ** -0.5
        att = F.softmax(att.masked_fill(self.mask[:t, :t], float("-inf")), dim=-1)
        y = (self.dropout(att) @ v).transpose(1, 2).reshape(b, t, -1)
        return self.out_proj(y)
