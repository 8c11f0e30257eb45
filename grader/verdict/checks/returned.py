"""What a candidate's call returned, in words, and whether it has the form of the reference's."""

from __future__ import annotations

import torch

from grader.sandbox.owntext import own, own_type
from grader.sandbox.results import CallResult, TensorOut, ValueOut

SHOWN = 3  # values of a returned tuple named in a message
REPR_CHARS = 60


def shape_text(shape: list[int] | torch.Size) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def dtype_text(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def tensor_text(shape: list[int], dtype: str, device: str = "cpu") -> str:
    """`a 0-d int64 tensor`, `a (2, 8, 48) float32 tensor`, `... tensor on meta`."""
    size = shape_text(shape) if shape else "0-d"
    return f"a {size} {dtype} tensor" + ("" if device == "cpu" else f" on {device}")


def value_text(out: TensorOut | ValueOut) -> str:
    """One returned value: a tensor by its shape and dtype, anything else by its type and repr."""
    if isinstance(out, TensorOut):
        return tensor_text(out.shape, out.dtype, out.device)
    if out.type == "NoneType":
        return "None"
    shown = out.repr if len(out.repr) <= REPR_CHARS else out.repr[: REPR_CHARS - 3] + "..."
    kind = own_type(out.type, "an object")
    return (f"{article(kind)} {kind}" if kind == out.type else kind) + own(f" {shown}", "")


def returned_text(call: CallResult) -> str:
    """What a call returned: `a (2, 8, 48) float32 tensor`, `a tuple of 2 (None, a list [])`."""
    if call.container is None:
        return value_text(call.outputs[0])
    if call.length == 0:
        return f"an empty {call.container}"
    items = [value_text(o) for o in call.outputs[:SHOWN]] + ["..."] * (call.length > SHOWN)
    return f"{article(call.container)} {call.container} of {call.length} ({', '.join(items)})"


def same_form(got: CallResult, want: CallResult) -> bool:
    """Both calls returned one value, or both a tuple (or list) of as many values."""
    return (got.container is None) == (want.container is None) and got.length == want.length


def fits(got: TensorOut, want: TensorOut) -> bool:
    """Of the wanted shape, on its device, floating where the wanted one is."""
    return got.shape == want.shape and got.device == want.device and floating(got) == floating(want)


def floating(out: TensorOut) -> bool:
    """Whether an output's dtype is a real floating type (not int, bool or complex)."""
    return out.torch_dtype is not None and out.torch_dtype.is_floating_point


def nonfinite_text(tensor: torch.Tensor) -> str:
    """`NaN`, `inf` or `NaN and inf`: what a tensor holds that is not a finite number."""
    kinds = {"NaN": tensor.isnan(), "inf": tensor.isinf()}
    return " and ".join(name for name, where in kinds.items() if where.any())
