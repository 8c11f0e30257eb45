"""split_heads returns a bool tensor."""


def split_heads(x, num_heads):
    B, T, C = x.shape
    assert C % num_heads == 0
    return x.reshape(B, T, num_heads, C // num_heads).transpose(1, 2) != 0


def merge_heads(x):
    B, nh, T, hd = x.shape
    return x.transpose(1, 2).reshape(B, T, nh * hd)
