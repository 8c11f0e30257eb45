"""Returns the list of per-head outputs instead of the projected output."""

import math

import torch


def mha_by_loop(mha, x):
    B, T, C = x.shape
    hd = mha.head_dim
    q, k, v = mha.qkv(x).split(C, dim=2)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    heads = []
    for h in range(mha.n_head):
        s = slice(h * hd, (h + 1) * hd)
        att = (q[..., s] @ k[..., s].transpose(-2, -1)) / math.sqrt(hd)
        heads.append(att.masked_fill(~causal, float("-inf")).softmax(dim=-1) @ v[..., s])
    y = mha.proj(torch.cat(heads, dim=-1))
    return heads
