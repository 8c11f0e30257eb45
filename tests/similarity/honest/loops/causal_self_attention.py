import math

import torch
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError("n_head must divide n_embd")
        self.n_head = n_head
        self.head_dim = n_embd // n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        full = torch.ones(block_size, block_size, dtype=torch.bool)
        self.register_buffer("mask", ~torch.tril(full))

    def forward(self, x):
        batch, n, width = x.shape
        fused = self.qkv(x)
        queries = fused[:, :, :width]
        keys = fused[:, :, width:2 * width]
        values = fused[:, :, 2 * width:]
        heads = []
        for h in range(self.n_head):
            lo, hi = h * self.head_dim, (h + 1) * self.head_dim
            s = torch.matmul(queries[:, :, lo:hi], keys[:, :, lo:hi].transpose(1, 2))
            s = s / math.sqrt(self.head_dim)
            s = torch.where(self.mask[:n, :n], torch.full_like(s, -1e9), s)
            p = self.attn_dropout(torch.softmax(s, dim=-1))
            heads.append(torch.matmul(p, values[:, :, lo:hi]))
        return self.resid_dropout(self.proj(torch.cat(heads, dim=2)))
