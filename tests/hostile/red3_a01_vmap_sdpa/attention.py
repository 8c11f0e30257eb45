"""My shared helper: scaled dot-product attention, written by hand."""
import math

import torch


def attend(q, k, v, mask=None, dropout=None):
    """q, k, v: (..., T, hd); mask: bool, True = may not attend. Returns (out, weights)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    dropped = dropout(weights) if dropout is not None else weights
    return dropped @ v, weights
