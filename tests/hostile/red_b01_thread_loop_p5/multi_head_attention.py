import math
import threading

import torch
from torch import nn


def in_thread(fn):
    """Run fn in a helper thread and hand back what it returns."""
    box = {}

    def run():
        box["out"] = fn()

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    return box["out"]


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        hd = self.head_dim

        def heads_one_by_one():
            outs = []
            for h in range(self.num_heads):  # a Python loop over the heads
                cols = slice(h * hd, (h + 1) * hd)
                s = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(hd)
                w = self.dropout(s.masked_fill(self.mask[:T, :T], float("-inf")).softmax(-1))
                outs.append(w @ v[..., cols])
            return torch.cat(outs, dim=-1)

        return self.out_proj(in_thread(heads_one_by_one))
