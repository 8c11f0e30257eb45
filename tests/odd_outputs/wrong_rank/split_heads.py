"""merge_heads forgets the reshape: it returns (B, T, nh, hd)."""


def split_heads(x, num_heads):
    B, T, C = x.shape
    assert C % num_heads == 0
    return x.reshape(B, T, num_heads, C // num_heads).transpose(1, 2)


def merge_heads(x):
    B, nh, T, hd = x.shape
    return x.transpose(1, 2).contiguous()
