# expect-fail: equals mha(x) (float32)
# expect-diagnosis: no_out_proj
import math

import torch


def mha_by_loop(mha, x):
    B, T, C = x.shape
    hd = mha.head_dim
    q, k, v = mha.qkv(x).split(C, dim=-1)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    outputs = []
    for h in range(mha.n_head):
        qh = q[:, :, h * hd : (h + 1) * hd]
        kh = k[:, :, h * hd : (h + 1) * hd]
        vh = v[:, :, h * hd : (h + 1) * hd]
        scores = qh @ kh.transpose(-2, -1) / math.sqrt(hd)
        scores = scores.masked_fill(~mask, float("-inf"))
        outputs.append(torch.softmax(scores, dim=-1) @ vh)
    return torch.cat(outputs, dim=-1)
