import torch
from torch import nn

from attention import attend, attend_fused
from split_heads import merge_heads, split_heads


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0, flash=True):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head = n_head
        self.head_dim = n_embd // n_head
        self.dropout = dropout
        self.flash = flash
        self.qkv = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        ones = torch.ones(block_size, block_size)
        self.register_buffer("mask", torch.triu(ones, diagonal=1).bool())

    def forward(self, x):
        T = x.shape[1]
        q, k, v = (split_heads(t, self.n_head) for t in self.qkv(x).chunk(3, dim=-1))
        if self.flash:
            p = self.dropout if self.training else 0.0
            out = attend_fused(q, k, v, dropout_p=p)
        else:
            out, _ = attend(q, k, v, self.mask[:T, :T], self.attn_dropout)
        return self.resid_dropout(self.proj(merge_heads(out)))
