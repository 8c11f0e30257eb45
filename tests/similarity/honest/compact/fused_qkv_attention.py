import torch.nn.functional as F
from torch import nn


class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        assert d_model % num_heads == 0
        self.h = num_heads
        self.W_qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.h, -1).transpose(1, 2) for z in self.W_qkv(x).split(c, -1))
        att = (q @ k.transpose(-2, -1)) * q.size(-1) ** -0.5
        if mask is not None:
            att = att.masked_fill(mask, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (self.dropout(att) @ v).transpose(1, 2).reshape(b, t, c)
        return self.W_o(y), att
