"""Problem 7: multi-head attention that returns its attention weights."""

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.1):
        super().__init__()
        # W_q, W_k, W_v, W_o: nn.Linear(d_model, d_model, bias=False); dropout: nn.Dropout
        raise NotImplementedError

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, T, d_model) -> ((B, T, d_model), (B, num_heads, T, T)); mask True = blocked."""
        raise NotImplementedError
