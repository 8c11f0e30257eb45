import torch


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    assert C % num_heads == 0, "num_heads must divide C"
    return x.reshape(B, T, num_heads, C // num_heads).permute(0, 2, 1, 3)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, nh, T, hd = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, nh * hd).contiguous()
