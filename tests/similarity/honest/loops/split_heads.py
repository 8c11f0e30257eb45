import torch


def split_heads(x, num_heads):
    batch, length, channels = x.shape
    if channels % num_heads != 0:
        raise ValueError("cannot split")
    size = channels // num_heads
    pieces = []
    for h in range(num_heads):
        pieces.append(x[:, :, h * size:(h + 1) * size])
    return torch.stack(pieces, dim=1)


def merge_heads(x):
    parts = [x[:, h] for h in range(x.shape[1])]
    return torch.cat(parts, dim=-1).contiguous()
