import torch
from torch import nn

from causal_attention import CausalAttention


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        make = lambda: CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)  # noqa
        self.heads = nn.ModuleList(make() for _ in range(num_heads))

    def forward(self, x):
        return torch.cat(tuple(map(lambda h: h(x), self.heads)), -1)
