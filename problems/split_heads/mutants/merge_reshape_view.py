# expect-fail: merge_heads returns a contiguous tensor
"""reshape instead of .contiguous(): with one head and a strided input it returns a view."""

import torch


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    if C % num_heads != 0:
        raise ValueError(f"num_heads={num_heads} does not divide C={C}")
    return x.reshape(B, T, num_heads, C // num_heads).transpose(1, 2)  # (B, nh, T, hd)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, nh, T, hd = x.shape
    return x.transpose(1, 2).reshape(B, T, nh * hd)  # (B, T, C), a view when it can be
