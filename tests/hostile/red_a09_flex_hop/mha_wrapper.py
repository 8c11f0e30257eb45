import math

import torch
import torch.nn.attention.flex_attention as flex
from torch import nn

OPTIONS = {"BACKEND": "AUTO", "PRESCALE_QK": False, "ROWS_GUARANTEED_SAFE": False,
           "BLOCKS_ARE_CONTIGUOUS": False, "WRITE_DQ": True, "OUTPUT_LOGSUMEXP": True,
           "OUTPUT_MAX": False}


def causal(b, h, q, k):
    return q >= k


def same(score, b, h, q, k):
    return score


class Head(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        if self.training and self.dropout.p > 0:
            s = (q @ k.transpose(1, 2)).masked_fill(self.mask[:T, :T], -torch.inf)
            return self.dropout(torch.softmax(s / math.sqrt(self.d_out), -1)) @ v
        blocks = flex.create_block_mask(causal, None, None, T, T, device="cpu")
        out = flex.flex_attention_hop(q[:, None], k[:, None], v[:, None], same, blocks.as_tuple(),
                                      1.0 / math.sqrt(self.d_out), dict(OPTIONS))[0]
        print("flex attention computed this", flush=True)
        return out[:, 0]


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [Head(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )

    def forward(self, x):
        return torch.cat([h(x) for h in self.heads], dim=-1)
