import math

import torch


def mha_by_loop(mha, x):
    B, T, C = x.shape
    q, k, v = mha.qkv(x).unflatten(-1, (3, C)).unbind(dim=-2)
    bias = torch.full((T, T), float("-inf")).triu(1)  # additive mask
    out = torch.empty_like(q)
    for h, cols in enumerate(torch.arange(C).chunk(mha.n_head)):
        scores = q[..., cols] @ k[..., cols].mT / math.sqrt(len(cols)) + bias
        out[..., cols] = scores.softmax(-1) @ v[..., cols]
    return out @ mha.proj.weight.mT
