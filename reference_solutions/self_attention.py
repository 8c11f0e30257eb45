"""Reference: single-head self-attention, no mask, no output projection."""

import math

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, embedding_dim: int):
        super().__init__()
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        C = x.shape[-1]
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)  # each (B, T, C)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C)  # (B, T, T)
        att = att.softmax(dim=-1)  # each query's weights over the keys sum to 1
        return att @ v  # (B, T, C)
