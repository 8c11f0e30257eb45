import torch


def split_heads(x, num_heads):
    if x.shape[-1] % num_heads != 0:
        raise ValueError("channels not divisible by heads")
    heads = x.chunk(num_heads, dim=-1)  # num_heads tensors of (B, T, hd)
    return torch.stack(heads, dim=1)


def merge_heads(x):
    return torch.cat(x.unbind(dim=1), dim=-1)
