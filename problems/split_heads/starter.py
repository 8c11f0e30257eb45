"""Problem 4: split channels into heads, and merge them back."""

import torch


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, T, C) -> (B, num_heads, T, C // num_heads)."""
    raise NotImplementedError


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, nh, T, hd) -> contiguous (B, T, nh * hd), the exact inverse of split_heads."""
    raise NotImplementedError
