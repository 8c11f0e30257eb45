import math

import torch.nn.functional as F
from torch import nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, embedding_dim, num_heads):
        super().__init__()
        if embedding_dim % num_heads:
            raise ValueError("num_heads must divide embedding_dim")
        self.h = num_heads
        self.d = embedding_dim // num_heads
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_o = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def _heads(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.h, self.d).transpose(1, 2)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self._heads(self.W_q(x)), self._heads(self.W_k(x)), self._heads(self.W_v(x))
        att = F.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.d), dim=-1)
        return self.W_o((att @ v).transpose(1, 2).reshape(B, T, C))
