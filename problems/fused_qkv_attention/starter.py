"""Problem 8: multi-head attention with one fused [Q | K | V] projection."""

import torch
from torch import nn


class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.1):
        super().__init__()
        # W_qkv: nn.Linear(d_model, 3 * d_model, bias=False), output channels [Q | K | V]
        # W_o: nn.Linear(d_model, d_model, bias=False)
        raise NotImplementedError

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, T, d_model) -> ((B, T, d_model), (B, num_heads, T, T)); mask True = blocked."""
        raise NotImplementedError
