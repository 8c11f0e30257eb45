import torch
import torch.nn.functional as F


def mha_by_loop(mha, x):
    b, t, c = x.shape
    q, k, v = F.linear(x, mha.qkv.weight, mha.qkv.bias).split(c, dim=-1)
    causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
    outs = []
    for i in range(mha.n_head):
        s = slice(i * mha.head_dim, (i + 1) * mha.head_dim)
        att = (q[..., s] @ k[..., s].transpose(-2, -1)) * mha.head_dim ** -0.5
        att = F.softmax(att.masked_fill(~causal, float("-inf")), dim=-1)
        outs.append(att @ v[..., s])
    return mha.proj(torch.cat(outs, dim=-1))
