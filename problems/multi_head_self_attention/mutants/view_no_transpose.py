# expect-fail: matches the reference (float32)
# expect-diagnosis: view_no_transpose
"""Heads split with view(B, nh, T, hd) directly: right shape, scrambled tokens."""

import math

import torch
from torch import nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, embedding_dim, num_heads):
        super().__init__()
        if embedding_dim % num_heads:
            raise ValueError("embedding_dim must be divisible by num_heads")
        self.h = num_heads
        self.d = embedding_dim // num_heads
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_o = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        q = self.W_q(x).view(B, self.h, T, self.d)
        k = self.W_k(x).view(B, self.h, T, self.d)
        v = self.W_v(x).view(B, self.h, T, self.d)
        att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.W_o(y)
