"""Problem 6: bidirectional multi-head self-attention."""

import torch
from torch import nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, embedding_dim: int, num_heads: int):
        super().__init__()
        # W_q, W_k, W_v, W_o: nn.Linear(embedding_dim, embedding_dim, bias=False)
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> (B, T, C), no mask."""
        raise NotImplementedError
