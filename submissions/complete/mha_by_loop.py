import math

import torch


def mha_by_loop(mha, x):
    for name in ("qkv", "proj", "n_head", "head_dim"):
        if not hasattr(mha, name):
            raise TypeError(f"mha has no {name}: pass a CausalSelfAttention")
    B, T, C = x.shape
    hd = mha.head_dim
    qkv = x @ mha.qkv.weight.T
    q, k, v = qkv[..., :C], qkv[..., C:2 * C], qkv[..., 2 * C:]
    allowed = torch.ones(T, T, dtype=torch.bool).tril()
    outs = []
    for h in range(mha.n_head):
        cols = slice(h * hd, (h + 1) * hd)
        att = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(hd)
        att = att.masked_fill(~allowed, float("-inf")).softmax(-1)
        outs.append(att @ v[..., cols])
    return torch.cat(outs, dim=-1) @ mha.proj.weight.T
