import torch
import torch.nn.functional as F
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        tri = torch.tril(torch.ones(context_length, context_length))
        self.register_buffer("mask", tri == 0)

    def forward(self, x):
        t = x.size(1)
        k = self.W_key(x)
        att = (self.W_query(x) @ k.transpose(-2, -1)) * k.size(-1) ** -0.5
        att = att.masked_fill(self.mask[:t, :t], float("-inf"))
        return self.dropout(F.softmax(att, dim=-1)) @ self.W_value(x)
