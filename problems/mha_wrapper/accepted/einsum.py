import torch
from torch import nn


class SingleHead(nn.Module):
    def __init__(
        self, d_in: int, d_out: int, context_length: int, dropout: float, qkv_bias: bool
    ) -> None:
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        allowed = torch.tril(torch.ones(context_length, context_length, dtype=torch.uint8))
        self.register_buffer("mask", allowed, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        logits = torch.einsum("bid,bjd->bij", q, k) / q.shape[-1] ** 0.5
        logits = logits.masked_fill(self.mask[:n, :n] == 0, float("-inf"))
        return torch.einsum("bij,bjd->bid", self.dropout(logits.softmax(-1)), v)


class MultiHeadAttentionWrapper(nn.Module):
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
        self.heads = nn.ModuleList(
            [SingleHead(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([h(x) for h in self.heads], dim=-1)
