from torch import nn

from fastattn import fused_with_weights
from split_heads import merge_heads, split_heads


class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads = num_heads
        self.W_qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        q, k, v = (split_heads(t, self.num_heads) for t in self.W_qkv(x).chunk(3, dim=-1))
        p = self.dropout.p if self.training else 0.0
        out, weights = fused_with_weights(q, k, v, mask, p)
        return self.W_o(merge_heads(out)), weights
