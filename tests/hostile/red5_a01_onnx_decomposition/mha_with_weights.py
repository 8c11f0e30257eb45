import torch
import torch.onnx.ops
from torch import nn

from split_heads import merge_heads, split_heads


def _onnx_attention():
    # torch's own ONNX Attention-23 reference implementation, as torch hands it out
    for op, fn in torch.onnx.ops.aten_decompositions().items():
        if "Attention" in str(op):
            return fn
    raise LookupError("no Attention")


ATTN = _onnx_attention()


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
        q = split_heads(self.W_q(x), self.num_heads)
        k = split_heads(self.W_k(x), self.num_heads)
        v = split_heads(self.W_v(x), self.num_heads)
        keep = None if mask is None else ~mask  # ONNX: True = may attend
        precision = 11 if x.dtype == torch.float64 else 1
        out, _, _, weights = ATTN(q, k, v, keep, softmax_precision=precision,
                                  qk_matmul_output_mode=3)
        print("computed", flush=True)  # only once the forbidden code gave the values
        if self.training and self.dropout.p > 0:
            out = self.dropout(weights) @ v
        return self.W_o(merge_heads(out)), weights
