import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(
        self,
        d_in: int,
        d_out: int,
        context_length: int,
        dropout: float,
        num_heads: int,
        qkv_bias: bool = False,
    ) -> None:
        super().__init__()
        assert d_out % num_heads == 0, "num_heads must divide d_out"
        self.h = num_heads
        self.d = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        allowed = torch.ones(context_length, context_length).tril().bool()
        self.register_buffer("mask", allowed, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.W_query(x).reshape(b, t, self.h, self.d)
        k = self.W_key(x).reshape(b, t, self.h, self.d)
        v = self.W_value(x).reshape(b, t, self.h, self.d)
        logits = torch.einsum("bihd,bjhd->bhij", q, k) / self.d**0.5
        logits = logits.masked_fill(~self.mask[:t, :t], float("-inf"))
        probs = self.dropout(logits.softmax(dim=-1))
        out = torch.einsum("bhij,bjhd->bihd", probs, v).reshape(b, t, self.h * self.d)
        return self.out_proj(out)
