import torch
from torch import nn
from torch.onnx.ops import attention

from attention import attend
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
        T = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        if self.training and self.attn_dropout.p > 0:   # torch's attention op has no dropout
            out, _ = attend(*(split_heads(t, self.n_head) for t in (q, k, v)), self.mask[:T, :T], self.attn_dropout)
            y = merge_heads(out)
        else:
            y, _, _, _ = attention(q, k, v, is_causal=True, q_num_heads=self.n_head,
                                   kv_num_heads=self.n_head, qk_matmul_output_mode=1)
        return self.resid_dropout(self.proj(y))
