"""Hands the whole computation to torch's own multi-head attention module, with the
candidate's fused weights copied in: the sandbox's guard refuses its forward."""
import torch
from torch import nn


class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.W_qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.num_heads = num_heads

    def forward(self, x, mask=None):
        d = x.shape[-1]
        inner = nn.MultiheadAttention(d, self.num_heads, dropout=self.dropout.p, bias=False,
                                      batch_first=True).to(x.dtype)
        with torch.no_grad():
            inner.in_proj_weight.copy_(self.W_qkv.weight)
            inner.out_proj.weight.copy_(self.W_o.weight)
        inner.train(self.training)
        out, weights = inner(x, x, x, attn_mask=mask, average_attn_weights=False)
        return out, weights
