"""Problem 1: single-head self-attention."""

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, embedding_dim: int):
        super().__init__()
        # W_q, W_k, W_v: nn.Linear(embedding_dim, embedding_dim, bias=False)
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> (B, T, C)."""
        raise NotImplementedError
