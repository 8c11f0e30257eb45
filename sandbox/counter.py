"""The operation counter, for the loop check: what one call runs, counted at torch's
dispatcher (below the C callables, callbacks and autograd Functions that call torch's
functions), and how often a tensor's values left torch (where work goes uncounted)."""

from __future__ import annotations

import contextlib
from types import TracebackType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from sandbox.policy import sealed_space
from sandbox.protocol import OpCount

PRODUCTS = frozenset({
    "mm", "bmm", "addmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot", "matmul", "linear",
    "_addmm_activation",
})  # fmt: skip
"""Operators that multiply matrices (the products of attention: a fused attention kernel, any
`_scaled_dot_product_*` but its backward, counts as its two)."""
SOFTMAXES = frozenset({
    "softmax", "_softmax", "_safe_softmax", "_masked_softmax", "log_softmax", "_log_softmax",
    "exp", "exp2", "expm1",
})  # fmt: skip
"""Operators that normalize attention's scores (their in-place forms too): counted whatever the
shape they give (more than one value in a row), so that all heads' weights at once count at
their size even in a view that folds them into rows; a fused attention kernel counts too."""
LEAVING = frozenset({
    "numpy", "__array__", "__dlpack__", "tolist", "item", "__float__", "__int__", "__complex__",
    "apply_", "map_", "map2_",
})  # fmt: skip
"""Torch functions that hand a tensor's values to Python or NumPy (whose work the dispatcher
never sees): `apply_` and `map_` hand each value to a callable."""
COUNTER = """
def __init__(self, counted):
    TorchDispatchMode.__init__(self)
    self.counted = counted

def __torch_dispatch__(self, func, types, args=(), kwargs=None):
    result = func(*args, **(kwargs or {}))
    space, _, name = getattr(getattr(func, "_schema", None), "name", "").partition("::")
    name = name.removesuffix("_") if space == "aten" else ""
    counted = self.counted
    counted["all"] += 1
    weights = 0
    if name.startswith(("_scaled_dot_product", "scaled_dot_product")):
        if not name.endswith("backward") and len(args) > 1 and rows(args[0]) and rows(args[1]):
            counted["products"] += 2
            weights = args[0].shape[:-1].numel() * args[1].shape[-2]
    elif name in PRODUCTS:
        counted["products"] += 1
    elif name in SOFTMAXES and rows(result):
        weights = result.numel()
    if weights:
        counted["softmaxes"] += 1
        if weights > counted["largest"]:
            counted["largest"] = weights
    return result

def rows(tensor):
    return isinstance(tensor, Tensor) and tensor.dim() >= 1 and tensor.shape[-1] > 1

def _should_skip_dynamo(cls):
    return False
"""
EXITS = """
def __init__(self, counted):
    TorchFunctionMode.__init__(self)
    self.counted = counted

def __torch_function__(self, func, types, args=(), kwargs=None):
    if getattr(func, "__name__", "") in LEAVING:
        self.counted["left"] += 1
    return func(*args, **(kwargs or {}))
"""
COUNTING = sealed_space(
    COUNTER,
    TorchDispatchMode=TorchDispatchMode,
    Tensor=torch.Tensor,
    PRODUCTS=PRODUCTS,
    SOFTMAXES=SOFTMAXES,
)
OpCounter: Any = type(
    "OpCounter",
    (TorchDispatchMode,),
    {
        "__doc__": "Counts the operators a call runs (torch's dispatcher sees each, whoever "
        "called it): all of them, the products and the softmaxes.",
        **COUNTING,
        # torch (2.5 on) would wrap its handler to keep torch._dynamo out, importing it (seconds)
        "_should_skip_dynamo": classmethod(COUNTING["_should_skip_dynamo"]),
    },
)
"""The candidate's code can reach it (torch's mode stack), and from it nothing of ours."""
Exits: Any = type(
    "Exits",
    (TorchFunctionMode,),
    {
        "__doc__": "Counts the calls that hand a tensor's values out of torch.",
        **sealed_space(EXITS, TorchFunctionMode=TorchFunctionMode, LEAVING=LEAVING),
    },
)
"""As reachable as the counter, and as sealed."""


class Counting:
    """While a call runs: the counter on torch's dispatch mode stack and the watch for values
    leaving torch on its function mode stack, both adding to `counted`."""

    def __init__(self) -> None:
        self.counted: OpCount = {
            "all": 0, "products": 0, "softmaxes": 0, "largest": 0, "unseen": 0, "left": 0
        }  # fmt: skip
        self.modes = contextlib.ExitStack()

    def __enter__(self) -> Counting:
        self.modes.enter_context(OpCounter(self.counted))
        self.modes.enter_context(Exits(self.counted))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.modes.close()
