import math

import torch


def mha_by_loop(mha, x):
    B, T, C = x.shape
    hd = mha.head_dim
    qkv = torch.einsum("btc,oc->bto", x, mha.qkv.weight)
    q, k, v = qkv[..., :C], qkv[..., C:2 * C], qkv[..., 2 * C:]
    allowed = torch.ones(T, T, dtype=torch.bool).tril()
    outs = []
    for h in range(mha.n_head):
        cols = slice(h * hd, (h + 1) * hd)
        att = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(hd)
        att = att.masked_fill(~allowed, float("-inf")).softmax(-1)
        outs.append(att @ v[..., cols])
    return torch.einsum("btc,oc->bto", torch.cat(outs, dim=-1), mha.proj.weight)
