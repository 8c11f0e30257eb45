# expect-fail: split_heads returns (B, nh, T, hd)
import torch


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    assert C % num_heads == 0
    return x.view(B, T, num_heads, C // num_heads).permute(0, 2, 3, 1)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, nh, T, hd = x.shape
    return x.transpose(1, 2).reshape(B, T, nh * hd)
