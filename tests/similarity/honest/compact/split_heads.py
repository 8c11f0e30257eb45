def split_heads(x, num_heads):
    b, t, c = x.shape
    assert c % num_heads == 0
    return x.view(b, t, num_heads, -1).transpose(1, 2)


def merge_heads(x):
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)
