"""Reference: GPT-2 style causal self-attention with a fused fast path and a manual twin."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(
        self, n_embd: int, n_head: int, block_size: int, dropout: float = 0.0, flash: bool = True
    ):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError(f"n_head={n_head} does not divide n_embd={n_embd}")
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)  # output channels [Q | K | V]
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head = n_head
        self.head_dim = n_embd // n_head
        self.dropout = dropout
        self.flash = flash  # read at every call: may be switched after construction
        causal = torch.tril(torch.ones(block_size, block_size, dtype=torch.bool))
        self.register_buffer("mask", causal.view(1, 1, block_size, block_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # (B, nh, T, hd)
        k = k.view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # (B, nh, T, hd)
        v = v.view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # (B, nh, T, hd)
        if self.flash:
            dropout_p = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)  # (B, nh, T, T)
            att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf"))
            att = F.softmax(att, dim=-1)
            y = self.attn_dropout(att) @ v  # (B, nh, T, hd)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.resid_dropout(self.proj(y))
