import math

import torch
from torch import nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=True):
        super().__init__()
        assert n_embd % n_head == 0, "n_head must divide n_embd"
        self.n_head = n_head
        self.head_dim = n_embd // n_head
        self.flash = flash
        self.p = dropout
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        additive = torch.full((block_size, block_size), float("-inf")).triu(1)
        self.register_buffer("mask", additive, persistent=False)  # additive float mask

    def forward(self, x):
        T = x.size(1)
        qkv = self.qkv(x).unflatten(-1, (3, self.n_head, self.head_dim))  # (B, T, 3, nh, hd)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each (B, nh, T, hd)
        if self.flash:
            out = F.scaled_dot_product_attention(
                q, k, v, dropout_p=self.p if self.training else 0.0, is_causal=True
            )
        else:
            scores = q @ k.mT / math.sqrt(self.head_dim) + self.mask[:T, :T]
            out = self.attn_dropout(scores.softmax(-1)) @ v
        return self.resid_dropout(self.proj(out.permute(0, 2, 1, 3).flatten(2)))
