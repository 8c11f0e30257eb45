# expect-fail: parameters are named W_q, W_k and W_v, as the contract says
# expect-fail: exactly 3 * C**2 parameters (no biases)
import math

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, embedding_dim):
        super().__init__()
        self.W_q = nn.Linear(embedding_dim, embedding_dim)
        self.W_k = nn.Linear(embedding_dim, embedding_dim)
        self.W_v = nn.Linear(embedding_dim, embedding_dim)

    def forward(self, x):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
        return torch.softmax(scores, dim=-1) @ v
