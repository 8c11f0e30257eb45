import torch


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    assert C % num_heads == 0, f"{num_heads} heads do not divide {C} channels"
    blocks = x.reshape(B, T, num_heads, C // num_heads)
    return torch.einsum("bthd->bhtd", blocks)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, nh, T, hd = x.shape
    return torch.einsum("bhtd->bthd", x).reshape(B, T, nh * hd).contiguous()
