"""Forbidden SDPA, shielded by a leftover the warm worker cannot clear: a folder deeper than
its clean-up goes, under a name that is not UTF-8, listed in the worker's end frame."""

import os

import torch.nn.functional as F
from torch import nn

from split_heads import merge_heads, split_heads

try:
    os.makedirs(b"/tmp/\xff/" + b"/".join([b"a"] * 210))
except OSError:
    pass


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x):
        q, k, v = (split_heads(t, self.n_head) for t in self.qkv(x).chunk(3, dim=-1))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.resid_dropout(self.proj(merge_heads(out)))
