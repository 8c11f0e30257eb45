def double(x):
    return x + x
