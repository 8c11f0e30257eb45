# expect-fail: split_heads puts the right channels in each head
# expect-diagnosis: view_no_transpose
import torch


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    assert C % num_heads == 0
    return x.reshape(B, num_heads, T, C // num_heads)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, nh, T, hd = x.shape
    return x.transpose(1, 2).reshape(B, T, nh * hd)
