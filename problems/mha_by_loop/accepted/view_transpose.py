import math

import torch
import torch.nn.functional as F


def mha_by_loop(mha, x):
    B, T, C = x.size()
    q, k, v = mha.qkv(x).split(C, dim=2)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    ys = []
    for h in range(mha.n_head):
        lo, hi = h * mha.head_dim, (h + 1) * mha.head_dim
        qh, kh, vh = q[:, :, lo:hi], k[:, :, lo:hi], v[:, :, lo:hi]
        att = qh @ kh.transpose(1, 2) / math.sqrt(mha.head_dim)
        att = F.softmax(att.masked_fill(future, float("-inf")), dim=-1)
        ys.append(att @ vh)
    return mha.proj(torch.cat(ys, dim=2))
