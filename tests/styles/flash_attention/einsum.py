import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=True):
        super().__init__()
        if n_embd % n_head:
            raise ValueError("n_head must divide n_embd")
        self.n_head = n_head
        self.head_dim = n_embd // n_head
        self.flash = flash
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        future = torch.ones(block_size, block_size, dtype=torch.bool).triu(1)
        self.register_buffer("mask", future)  # True = may not attend

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).reshape(B, T, 3, self.n_head, self.head_dim).unbind(2)
        if self.flash:
            p = self.attn_dropout.p if self.training else 0.0
            q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hd)
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
            y = y.transpose(1, 2)  # (B, T, nh, hd)
        else:
            scores = torch.einsum("bihd,bjhd->bhij", q, k) / self.head_dim**0.5
            scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
            weights = self.attn_dropout(scores.softmax(dim=-1))
            y = torch.einsum("bhij,bjhd->bihd", weights, v)
        return self.resid_dropout(self.proj(y.reshape(B, T, C)))
