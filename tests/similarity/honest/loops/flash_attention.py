import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=True):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError("n_head must divide n_embd")
        self.flash = flash
        self.n_head = n_head
        self.head_dim = n_embd // n_head
        self.dropout = dropout
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        full = torch.ones(block_size, block_size, dtype=torch.bool)
        self.register_buffer("mask", ~torch.tril(full))

    def forward(self, x):
        batch, n, width = x.shape
        fused = self.qkv(x)
        heads = []
        for part in range(3):
            t = fused[:, :, part * width:(part + 1) * width]
            heads.append(torch.stack([t[:, :, h * self.head_dim:(h + 1) * self.head_dim]
                                      for h in range(self.n_head)], dim=1))
        queries, keys, values = heads
        if self.flash:
            rate = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(queries, keys, values, dropout_p=rate, is_causal=True)
        else:
            s = torch.matmul(queries, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
            s = torch.where(self.mask[:n, :n], torch.full_like(s, -1e9), s)
            y = torch.matmul(self.attn_dropout(torch.softmax(s, dim=-1)), values)
        y = torch.cat([y[:, h] for h in range(self.n_head)], dim=-1)
        return self.resid_dropout(self.proj(y))
