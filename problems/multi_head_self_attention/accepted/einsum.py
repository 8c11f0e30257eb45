import torch
from torch import nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, embedding_dim, num_heads):
        super().__init__()
        assert embedding_dim % num_heads == 0, "num_heads must divide embedding_dim"
        self.num_heads = num_heads
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_o = nn.Linear(embedding_dim, embedding_dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        hd = C // self.num_heads
        q = self.W_q(x).reshape(B, T, self.num_heads, hd)
        k = self.W_k(x).reshape(B, T, self.num_heads, hd)
        v = self.W_v(x).reshape(B, T, self.num_heads, hd)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * hd**-0.5
        weights = scores.softmax(dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v)
        return self.W_o(out.reshape(B, T, C))
