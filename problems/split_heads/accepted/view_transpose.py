import torch


def split_heads(x, num_heads):
    B, T, C = x.size()
    if C % num_heads:
        raise ValueError("num_heads must divide C")
    return x.contiguous().view(B, T, num_heads, C // num_heads).transpose(1, 2)


def merge_heads(x):
    B, nh, T, hd = x.size()
    return x.transpose(1, 2).contiguous().view(B, T, nh * hd)
