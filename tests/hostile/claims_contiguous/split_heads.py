import torch


class Claimed(torch.Tensor):
    """A tensor that says it is contiguous."""

    def is_contiguous(self, *args, **kwargs):
        return True


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    assert C % num_heads == 0, "num_heads must divide C"
    return x.reshape(B, T, num_heads, C // num_heads).permute(0, 2, 1, 3)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    # the same non-contiguous layout as noncontig_plain, wearing the subclass
    B, nh, T, hd = x.shape
    merged = x.permute(2, 0, 1, 3).reshape(T, B, nh * hd)
    return merged.transpose(0, 1).as_subclass(Claimed)
