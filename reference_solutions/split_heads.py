"""Reference: split channels into heads, and merge heads back into channels."""

import torch


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    if C % num_heads != 0:
        raise ValueError(f"num_heads={num_heads} does not divide C={C}")
    # head h takes channels h*hd .. (h+1)*hd - 1 of every token
    x = x.reshape(B, T, num_heads, C // num_heads)  # (B, T, nh, hd)
    return x.transpose(1, 2)  # (B, nh, T, hd)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, nh, T, hd = x.shape
    x = x.transpose(1, 2)  # (B, T, nh, hd)
    return x.contiguous().view(B, T, nh * hd)  # (B, T, C)
