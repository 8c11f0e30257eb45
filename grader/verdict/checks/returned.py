"""What a candidate's call returned, in words, and whether it has the form of the reference's.

Shapes, counts and type names in these words are the candidate process's report: `sizes`, the
sizes the grader knows for the probe, bound what a candidate-facing message shows of them
(`grader.sandboxing.owntext`)."""

from __future__ import annotations

from collections.abc import Collection

import torch

from grader.sandboxing.owntext import BUILTIN_NAMES, own, own_count, own_shape, own_type
from grader.sandboxing.results import CallResult, TensorOut, ValueOut
from grader.sandboxing.untrusted import JUDGED
from sandbox.protocol import AttrValue

SHOWN = 3  # values of a returned tuple named in a message
REPR_CHARS = 60
CLASSES = BUILTIN_NAMES | {
    name
    for name, value in vars(torch.nn).items()
    if isinstance(value, type) and issubclass(value, torch.nn.Module)
}
"""Class names a candidate may see of their module's parts: Python's and torch.nn's."""


def shape_text(shape: list[int] | torch.Size) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def dtype_text(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def typed(name: str, what: str, known: Collection[str] = BUILTIN_NAMES) -> str:
    """`a tuple`, `a Sequential`; to the candidate, a class not `known` as `what` of its own
    class: `an object of its own class` (`own_type`)."""
    kind = own_type(name, what, known)
    return f"{article(kind)} {kind}"


def tensor_text(shape: list[int], dtype: str, sizes: Collection[int], device: str = "cpu") -> str:
    """`a 0-d int64 tensor`, `a (2, 8, 48) float32 tensor`, `... tensor on meta`."""
    size = own_shape(shape, sizes) if shape else "0-d"
    return f"a {size} {dtype} tensor" + ("" if device == "cpu" else f" on {device}")


def value_text(out: TensorOut | ValueOut, sizes: Collection[int]) -> str:
    """One returned value: a tensor by its shape and dtype, anything else by its type and repr."""
    if isinstance(out, TensorOut):
        return tensor_text(out.shape, out.dtype, sizes, out.device)
    if out.type == "NoneType":
        return "None"
    shown = out.repr if len(out.repr) <= REPR_CHARS else out.repr[: REPR_CHARS - 3] + "..."
    return typed(out.type, "object") + own(f" {shown}", "")


def returned_text(call: CallResult, sizes: Collection[int]) -> str:
    """What a call returned: `a (2, 8, 48) float32 tensor`, `a tuple of 2 (None, a list [])`."""
    if call.container is None:
        return value_text(call.outputs[0], sizes)
    kind = own_type(call.container, "sequence")
    if call.length == 0:
        return f"an empty {kind}"
    items = [value_text(o, sizes) for o in call.outputs[:SHOWN]] + ["..."] * (call.length > SHOWN)
    return f"{article(kind)} {kind} of {own_count(call.length)} ({', '.join(items)})"


def public_attr(value: AttrValue, expected: AttrValue) -> str:
    """An attribute the worker read, as its candidate may see it: by its class (`a Dropout`,
    `a str`, `None`) or as `another value` than the `expected` one of its type."""
    if isinstance(value, dict):
        if value.get("missing"):
            return "no such attribute"
        kind = str(value.get("type", "object"))
        kind = kind if kind in CLASSES else "object of its own class"
    elif value is None or type(value) is type(expected):
        return "None" if value is None else "another value"
    else:
        kind = type(value).__name__
    return f"{article(kind)} {kind}"


def same_form(got: CallResult, want: CallResult) -> bool:
    """Both calls returned one value, or both a tuple (or list) of as many values."""
    return (got.container is None) == (want.container is None) and got.length == want.length


def fits(got: TensorOut, want: TensorOut) -> bool:
    """Of the wanted shape, on its device, of a dtype the host reads (`JUDGED`), floating where
    the wanted one is."""
    return (
        got.shape == want.shape
        and got.device == want.device
        and got.torch_dtype in JUDGED.values()
        and floating(got) == floating(want)
    )


def floating(out: TensorOut) -> bool:
    """Whether an output's dtype is a real floating type (not int, bool or complex)."""
    return out.torch_dtype.is_floating_point


def nonfinite_text(tensor: torch.Tensor) -> str:
    """`NaN`, `inf` or `NaN and inf`: what a tensor holds that is not a finite number."""
    kinds = {"NaN": tensor.isnan(), "inf": tensor.isinf()}
    return " and ".join(name for name, where in kinds.items() if where.any())
