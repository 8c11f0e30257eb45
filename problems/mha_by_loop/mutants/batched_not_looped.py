# expect-fail: loops over heads in Python
import math

import torch


def mha_by_loop(mha, x):
    B, T, C = x.shape
    q, k, v = mha.qkv(x).split(C, dim=-1)
    q = q.view(B, T, mha.n_head, mha.head_dim).transpose(1, 2)
    k = k.view(B, T, mha.n_head, mha.head_dim).transpose(1, 2)
    v = v.view(B, T, mha.n_head, mha.head_dim).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(mha.head_dim)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
    y = (weights @ v).transpose(1, 2).reshape(B, T, C)
    return mha.proj(y)
