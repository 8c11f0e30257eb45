"""The operation counter: what one call runs, counted at torch's function-override layer, for
the loop check."""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from sandbox.policy import sealed_space

PRODUCTS = frozenset({
    "matmul", "__matmul__", "__rmatmul__", "bmm", "mm", "baddbmm", "einsum", "tensordot",
    "scaled_dot_product_attention",
})  # fmt: skip
"""Torch functions that multiply matrices (the products of attention: an SDPA call counts as
its two)."""
SOFTMAXES = frozenset({
    "softmax", "_softmax", "log_softmax", "softmin", "special_softmax", "special_log_softmax",
    "exp", "exp_", "exp2", "exp2_", "special_exp2", "expm1", "expm1_", "special_expm1",
})  # fmt: skip
"""Torch functions that normalize attention's scores: counted whatever the shape they give
(more than one value in a row), so that all heads' weights at once count at their size even
in a view that folds them into rows; an SDPA call counts too."""
COUNTER = """
def __init__(self):
    TorchFunctionMode.__init__(self)
    self.counted = {"all": 0, "products": 0, "softmaxes": 0, "largest": 0, "unseen": 0}

def __torch_function__(self, func, types, args=(), kwargs=None):
    name = getattr(func, "__name__", "")
    result = func(*args, **(kwargs or {}))
    counted = self.counted
    counted["all"] += 1
    if name in PRODUCTS:
        counted["products"] += 2 if name == "scaled_dot_product_attention" else 1
    if name == "scaled_dot_product_attention":
        query = args[0] if args else kwargs.get("query")
        weights = query.shape[:-1].numel() * query.shape[-2] if isinstance(query, Tensor) else 0
    else:
        weights = result.numel() if name in SOFTMAXES and rows(result) else 0
    if weights:
        counted["softmaxes"] += 1
        if weights > counted["largest"]:
            counted["largest"] = weights
    return result

def rows(tensor):
    return isinstance(tensor, Tensor) and tensor.dim() >= 1 and tensor.shape[-1] > 1
"""
OpCounter: Any = type(
    "OpCounter",
    (TorchFunctionMode,),
    {
        "__doc__": "Counts the torch functions a call runs (torch's function-override layer "
        "sees each): all of them, the products and the softmaxes.",
        **sealed_space(
            COUNTER,
            TorchFunctionMode=TorchFunctionMode,
            Tensor=torch.Tensor,
            PRODUCTS=PRODUCTS,
            SOFTMAXES=SOFTMAXES,
        ),
    },
)
"""The candidate's code can reach it (torch's mode stack), and from it nothing of ours."""
