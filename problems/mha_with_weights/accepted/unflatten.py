import math

from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        assert d_model % num_heads == 0, "num_heads must divide d_model"
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x, mask=None):
        def heads(t):
            return t.unflatten(-1, (self.num_heads, -1)).permute(0, 2, 1, 3)

        q, k, v = heads(self.W_q(x)), heads(self.W_k(x)), heads(self.W_v(x))
        scores = q @ k.mT / math.sqrt(q.size(-1))
        if mask is not None:
            bias = scores.new_zeros(mask.shape).masked_fill(mask, -math.inf)  # additive mask
            scores = scores + bias
        weights = scores.softmax(dim=-1)
        out = (self.dropout(weights) @ v).permute(0, 2, 1, 3).flatten(2)
        return self.W_o(out), weights
