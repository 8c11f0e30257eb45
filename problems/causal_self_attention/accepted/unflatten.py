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
        bias = torch.full((block_size, block_size), float("-inf")).triu(1)
        self.register_buffer("mask", bias, persistent=False)  # additive float mask

    def forward(self, x):
        T = x.shape[1]
        qkv = self.qkv(x).unflatten(-1, (3, self.n_head, self.head_dim))  # (B, T, 3, nh, hd)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each (B, nh, T, hd)
        scores = q @ k.mT / math.sqrt(self.head_dim) + self.mask[:T, :T]
        weights = self.attn_dropout(scores.softmax(dim=-1))
        out = (weights @ v).permute(0, 2, 1, 3).flatten(2)
        return self.resid_dropout(self.proj(out))
