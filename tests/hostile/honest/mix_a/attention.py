"""My shared helper: scaled dot-product attention, written by hand, and the fused fast path."""
import math

import torch
import torch.nn.functional as F


def attend(q, k, v, mask=None, dropout=None):
    """q, k, v: (..., T, hd); mask: bool, True = may not attend. Returns (out, weights)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    dropped = dropout(weights) if dropout is not None else weights
    return dropped @ v, weights


def attend_fused(q, k, v, dropout_p=0.0):
    """The fast path, for flash_attention only: torch's fused kernel, causal."""
    return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
