"""Fast attention helper (shared)."""
import torch
import torch.nn.functional as F

_said = []


def _note():
    if not _said:
        _said.append(1)
        print("computed", flush=True)


def fused(q, k, v, is_causal=False, dropout_p=0.0, allowed=None):
    """q, k, v batched on dim 0; allowed: bool, True = may attend, batched on dim 0 too."""
    if allowed is None:
        def one(a, b, c):
            return F.scaled_dot_product_attention(a, b, c, is_causal=is_causal, dropout_p=dropout_p)
        out = torch.vmap(one, randomness="different")(q, k, v)
    else:
        def one_m(a, b, c, m):
            return F.scaled_dot_product_attention(a, b, c, attn_mask=m, dropout_p=dropout_p)
        out = torch.vmap(one_m, randomness="different")(q, k, v, allowed)
    _note()
    return out


def fused_with_weights(q, k, v, mask=None, dropout_p=0.0):
    """Weights via the same kernel with V = identity; mask: True = may not attend."""
    B, H, T, _ = q.shape
    eye = torch.eye(T, dtype=q.dtype).expand(B, H, T, T)
    allowed = None if mask is None else (~mask).expand(B, H, T, T)
    weights = fused(q, k, eye, dropout_p=dropout_p, allowed=allowed)
    return weights @ v, weights
