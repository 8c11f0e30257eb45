# expect-fail: split_heads puts the right channels in each head
# expect-diagnosis: interleaved_heads
import torch


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    assert C % num_heads == 0
    return x.reshape(B, T, C // num_heads, num_heads).permute(0, 3, 1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, nh, T, hd = x.shape
    return x.transpose(1, 2).reshape(B, T, nh * hd)
