import math

import torch
import torch.nn.functional as F
from torch import nn

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
        B, T, C = x.shape
        q, k, v = (split_heads(t, self.n_head) for t in self.qkv(x).chunk(3, dim=-1))
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        weights = self.attn_dropout(scores.softmax(dim=-1))
        out = merge_heads(torch.einsum("bhqk,bhkd->bhqd", weights, v))
        return self.resid_dropout(self.proj(out))


def _compare_with_pytorch():
    """My own sanity check against PyTorch's fused kernel (run this file directly)."""
    torch.manual_seed(0)
    m = CausalSelfAttention(32, 4, 8).eval()
    x = torch.randn(2, 8, 32)
    q, k, v = (split_heads(t, 4) for t in m.qkv(x).chunk(3, dim=-1))
    ref = m.proj(merge_heads(F.scaled_dot_product_attention(q, k, v, is_causal=True)))
    print("max diff", (m(x) - ref).abs().max().item())


if __name__ == "__main__":
    _compare_with_pytorch()
