# expect-fail: matches the reference (float32)
# expect-diagnosis: qkv_order
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
        keys = self.W_q(x)
        queries = self.W_k(x)
        values = self.W_v(x)
        scores = queries @ keys.transpose(-2, -1) / math.sqrt(x.shape[-1])
        return torch.softmax(scores, dim=-1) @ values
