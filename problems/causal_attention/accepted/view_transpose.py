import math

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
        # lower-triangular ones: 1 where a token may look
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        T = x.size(1)
        Q, K, V = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.matmul(Q, K.transpose(1, 2)) / math.sqrt(Q.size(-1))
        scores = scores.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
        weights = self.dropout(F.softmax(scores, dim=-1))
        return torch.matmul(weights, V)
