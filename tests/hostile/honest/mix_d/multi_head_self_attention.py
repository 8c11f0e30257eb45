import math

import torch
from torch import nn


def lecun_normal_(tensor):
    fan_in, _ = nn.init._calculate_fan_in_and_fan_out(tensor)
    with torch.no_grad():
        return tensor.normal_(0, 1 / math.sqrt(fan_in))


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, embedding_dim, num_heads):
        super().__init__()
        if embedding_dim % num_heads:
            raise ValueError("embedding_dim must be divisible by num_heads")
        self.h, self.d = num_heads, embedding_dim // num_heads
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_o = nn.Linear(embedding_dim, embedding_dim, bias=False)
        for lin in (self.W_q, self.W_k, self.W_v, self.W_o):
            lecun_normal_(lin.weight)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (w(x).view(B, T, self.h, self.d).transpose(1, 2) for w in (self.W_q, self.W_k, self.W_v))
        y = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d), dim=-1) @ v
        return self.W_o(y.transpose(1, 2).reshape(B, T, C))
