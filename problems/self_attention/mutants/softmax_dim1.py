# expect-fail: matches the reference (float32)
# expect-diagnosis: softmax_wrong_dim
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
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(x.size(-1))
        weights = torch.softmax(scores, dim=1)
        return torch.bmm(weights, v)
