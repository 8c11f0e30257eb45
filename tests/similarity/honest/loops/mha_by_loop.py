import math

import torch


def mha_by_loop(mha, x):
    batch, n, width = x.shape
    size = mha.head_dim
    fused = torch.matmul(x, mha.qkv.weight.t())
    if mha.qkv.bias is not None:
        fused = fused + mha.qkv.bias
    queries = fused[:, :, :width]
    keys = fused[:, :, width:2 * width]
    values = fused[:, :, 2 * width:]
    blocked = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    heads = []
    for h in range(mha.n_head):
        lo, hi = h * size, (h + 1) * size
        s = torch.matmul(queries[:, :, lo:hi], keys[:, :, lo:hi].transpose(1, 2))
        s = torch.where(blocked, torch.full_like(s, -1e9), s / math.sqrt(size))
        heads.append(torch.matmul(torch.softmax(s, dim=-1), values[:, :, lo:hi]))
    return mha.proj(torch.cat(heads, dim=2))
