import math

import torch
from torch import nn



class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head = n_head
        self.head_dim = n_embd // n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(block_size, block_size), diagonal=1).bool())

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (t.reshape(B, T, self.n_head, self.head_dim) for t in self.qkv(x).chunk(3, dim=-1))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        weights = self.attn_dropout(scores.softmax(dim=-1))
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T, C)
        return self.resid_dropout(self.proj(out))
