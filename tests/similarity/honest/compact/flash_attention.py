import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=True):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head, self.head_dim, self.flash = n_head, n_embd // n_head, flash
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size)) == 0)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.n_head, -1).transpose(1, 2) for z in self.qkv(x).split(c, 2))
        if self.flash:
            drop = self.attn_dropout.p if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * self.head_dim ** -0.5
            att = F.softmax(att.masked_fill(self.mask[:t, :t], float("-inf")), dim=-1)
            y = self.attn_dropout(att) @ v
        return self.resid_dropout(self.proj(y.transpose(1, 2).reshape(b, t, c)))
