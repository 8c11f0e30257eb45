import torch
from torch import nn

from fastattn import fused
from split_heads import merge_heads, split_heads


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
        q, k, v = (split_heads(t, self.n_head) for t in self.qkv(x).chunk(3, dim=-1))
        p = self.attn_dropout.p if self.training else 0.0
        out = merge_heads(fused(q, k, v, is_causal=True, dropout_p=p))
        return self.resid_dropout(self.proj(out))
