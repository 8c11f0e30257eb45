# expect-fail: split_heads raises when num_heads does not divide C
import torch


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    return x.reshape(B, T, num_heads, -1).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, nh, T, hd = x.shape
    return x.transpose(1, 2).reshape(B, T, nh * hd)
