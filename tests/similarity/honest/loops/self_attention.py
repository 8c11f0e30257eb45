import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, embedding_dim):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x):
        queries = self.W_q(x)
        keys = self.W_k(x)
        values = self.W_v(x)
        results = []
        for b in range(x.shape[0]):
            s = torch.matmul(queries[b], keys[b].T) / math.sqrt(self.embedding_dim)
            p = torch.exp(s - s.max(dim=-1, keepdim=True).values)
            p = p / p.sum(dim=-1, keepdim=True)
            results.append(torch.matmul(p, values[b]))
        return torch.stack(results)
