import torch
from torch import nn

from causal_attention import CausalAttention


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)
        )

    def forward(self, x):
        stacked = torch.stack([head(x) for head in self.heads], dim=2)  # (B, T, nh, d_out)
        return stacked.flatten(start_dim=2)  # head 0's channels first
