# expect-fail: merge_heads is the exact inverse
import torch


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    assert C % num_heads == 0
    return x.view(B, T, num_heads, C // num_heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, nh, T, hd = x.shape
    return x.transpose(1, 2).view(B, T, nh * hd)
