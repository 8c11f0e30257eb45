import torch
import torch.nn.functional as F
from torch import nn


class SelfAttention(nn.Module):
    """One fused projection built from the three weights, split with chunk."""

    def __init__(self, embedding_dim):
        super().__init__()
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x):
        C = x.size(-1)
        weight = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight], dim=0)
        qkv = F.linear(x, weight).unflatten(-1, (3, C))  # (B, T, 3, C)
        q, k, v = qkv.permute(2, 0, 1, 3).chunk(3, dim=0)  # each (1, B, T, C)
        scores = q.squeeze(0) @ k.squeeze(0).permute(0, 2, 1) * C**-0.5
        scores = scores - scores.amax(dim=-1, keepdim=True)
        weights = scores.exp()
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights @ v.squeeze(0)
