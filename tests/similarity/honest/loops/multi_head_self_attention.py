import math

import torch
import torch.nn as nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, embedding_dim, num_heads):
        super().__init__()
        if embedding_dim % num_heads != 0:
            raise ValueError("bad number of heads")
        self.num_heads = num_heads
        self.head_size = embedding_dim // num_heads
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_o = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x):
        queries, keys, values = self.W_q(x), self.W_k(x), self.W_v(x)
        heads = []
        for h in range(self.num_heads):
            lo, hi = h * self.head_size, (h + 1) * self.head_size
            s = torch.matmul(queries[..., lo:hi], keys[..., lo:hi].transpose(1, 2))
            p = torch.softmax(s / math.sqrt(self.head_size), dim=-1)
            heads.append(torch.matmul(p, values[..., lo:hi]))
        return self.W_o(torch.cat(heads, dim=2))
