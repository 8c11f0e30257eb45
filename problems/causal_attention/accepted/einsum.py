import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(
        self, d_in: int, d_out: int, context_length: int, dropout: float, qkv_bias: bool = False
    ) -> None:
        super().__init__()
        self.scale = d_out**-0.5
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(p=dropout)
        blocked = torch.ones(context_length, context_length).triu(diagonal=1).bool()
        self.register_buffer("mask", blocked, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        logits = torch.einsum("bid,bjd->bij", q, k) * self.scale
        logits = torch.where(self.mask[:n, :n], torch.finfo(logits.dtype).min, logits)
        probs = self.dropout(logits.softmax(-1))
        return torch.einsum("bij,bjd->bid", probs, v)
