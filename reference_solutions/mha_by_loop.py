"""Reference: a causal multi-head attention computed one head at a time."""

import math

import torch
from torch import nn


def mha_by_loop(mha: nn.Module, x: torch.Tensor) -> torch.Tensor:
    B, T, C = x.shape
    hd = mha.head_dim
    q, k, v = mha.qkv(x).split(C, dim=2)  # each (B, T, C)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
    heads = []
    for h in range(mha.n_head):
        s = slice(h * hd, (h + 1) * hd)  # this head's channels
        att = (q[..., s] @ k[..., s].transpose(-2, -1)) / math.sqrt(hd)  # (B, T, T)
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        heads.append(att @ v[..., s])  # (B, T, hd)
    return mha.proj(torch.cat(heads, dim=-1))  # (B, T, C)
