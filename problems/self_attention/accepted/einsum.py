import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, embedding_dim: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_k = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.W_v = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.scale = embedding_dim**-0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = self.W_q(x)
        k = self.W_k(x)
        v = self.W_v(x)
        logits = torch.einsum("bqc,bkc->bqk", q, k) * self.scale
        probs = logits.softmax(dim=-1)
        return torch.einsum("bqk,bkc->bqc", probs, v)
