import math

import torch
import torch.nn.functional as F
from torch import nn


class Head(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        T = x.size(1)
        Q, K, V = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.matmul(Q, K.transpose(1, 2)) / math.sqrt(K.size(-1))
        scores = scores.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        return torch.matmul(self.dropout(F.softmax(scores, dim=-1)), V)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(Head(d_in, d_out, context_length, dropout, qkv_bias))

    def forward(self, x):
        outputs = []
        for head in self.heads:
            outputs.append(head(x))
        return torch.cat(outputs, dim=2)
