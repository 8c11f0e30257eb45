import torch


def attend(q, k, v):
    # never imported by name: the host's scope does not reach this file
    return torch._scaled_dot_product_attention_math(q, k, v, is_causal=True)[0]
