# expect-fail: matches the reference (float64)
# expect-hidden-diagnosis: float32_precision
import math

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, embedding_dim):
        super().__init__()
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
        # softmax in float32 for numerical stability
        weights = torch.softmax(scores.float(), dim=-1).to(v.dtype)
        return weights @ v
