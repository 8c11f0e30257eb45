from torch import nn
from torch.onnx.ops import attention

from attention import attend
from split_heads import merge_heads, split_heads


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.1):
        super().__init__()
        assert d_model % num_heads == 0
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        h = self.num_heads
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        if self.training and self.dropout.p > 0:   # torch's attention op has no dropout
            out, weights = attend(*(split_heads(t, h) for t in (q, k, v)), mask, self.dropout)
            return self.W_o(merge_heads(out)), weights
        allowed = None if mask is None else ~mask   # ONNX: True = may attend
        out, _, _, weights = attention(q, k, v, allowed, q_num_heads=h, kv_num_heads=h,
                                       qk_matmul_output_mode=3)   # 3: return the softmax too
        return self.W_o(out), weights
