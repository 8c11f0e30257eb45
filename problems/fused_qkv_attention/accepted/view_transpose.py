import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        assert d_model % num_heads == 0
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.W_qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.attn_drop = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        qkv = self.W_qkv(x)
        q = qkv[..., : self.d_model]
        k = qkv[..., self.d_model : 2 * self.d_model]
        v = qkv[..., 2 * self.d_model :]
        q = q.reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        att = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            att = att.masked_fill(mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = torch.matmul(self.attn_drop(att), v)
        y = y.transpose(1, 2).contiguous().view(B, T, self.d_model)
        return self.W_o(y), att
