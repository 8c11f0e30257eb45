"""Candidate code for the guard's tests: each function reaches an attention operator, or
the guard itself, by another route. Run inside a child that armed the guard."""

import math

import torch
import torch.nn.functional as F


def public_sdpa(q):
    return F.scaled_dot_product_attention(q, q, q, is_causal=True)


def registry_sdpa(q):
    return torch.ops.aten.scaled_dot_product_attention.default(q, q, q, None, 0.0, True)


def private_math(q):
    return torch._scaled_dot_product_attention_math(q, q, q)[0]


def private_flash(q):
    return torch._scaled_dot_product_flash_attention_for_cpu(q, q, q)[0]


def flash_without_autograd(q):
    with torch.inference_mode():
        return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, q, q)[0]


def native_mha(q):
    x = q[0, 0].unsqueeze(0)  # (1, T, 4)
    weight, bias = torch.eye(12, 4), torch.zeros(12)
    return torch._native_multi_head_attention(x, x, x, 4, 2, weight, bias, torch.eye(4), bias[:4])[0]


def module_mha(q):
    x = q[0, 0].unsqueeze(0)
    mha = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    return mha(x, x, x, need_weights=True)[0]


def functional_mha(q):
    x = q[0, 0].unsqueeze(1)  # (T, 1, 4)
    w, b = torch.eye(12, 4), torch.zeros(12)
    return F.multi_head_attention_forward(x, x, x, 4, 2, w, b, None, None, False, 0.0, torch.eye(4), b[:4])[0]


def quantizable_mha(q):
    import torch.ao.nn.quantizable as quantizable

    x = q[0, 0].unsqueeze(0)
    return quantizable.MultiheadAttention(4, 2, batch_first=True)(x, x, x)[0]


def quantizable_impl(q):
    import torch.ao.nn.quantizable as quantizable

    x = q[0, 0].unsqueeze(0).float()
    module = quantizable.MultiheadAttention(4, 2, batch_first=True)
    return module._forward_impl(x, x, x, None, True, None, False)[0]  # the whole computation


def manual(q):
    att = q @ q.transpose(-2, -1) / math.sqrt(q.size(-1))
    return torch.softmax(att, dim=-1) @ q


def frame_walk(q):
    try:
        F.scaled_dot_product_attention(q, q, q)
    except RuntimeError as exc:
        return exc.__traceback__.tb_frame.f_globals


def own_frame(q):
    import sys

    return sys._getframe(0).f_back


def garbage_collector(q):
    import gc

    return [o for o in gc.get_objects() if type(o).__name__ == "Guard"]


def text(q):
    exec("import torch")


def written_module(q):
    import sys
    import tempfile

    folder = tempfile.mkdtemp()
    with open(f"{folder}/planted.py", "w") as planted:
        planted.write("import torch\nattend = torch._scaled_dot_product_attention_math\n")
    sys.path.insert(0, folder)
    import planted

    return planted.attend(q, q, q)[0]


def ctypes_load(q):
    import ctypes

    return ctypes.CDLL(None)


def own_kernel(q):
    import warnings

    library = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        library.impl("scaled_dot_product_attention", lambda *a, **k: manual(q), "CompositeImplicitAutograd")
    routes_kept.append(library)
    return F.scaled_dot_product_attention(q, q, q)


def dataclass_config(q):
    import dataclasses

    @dataclasses.dataclass
    class Config:
        n_head: int = 2

    return Config().n_head


routes_kept = []


def timeit_text(q):
    import timeit

    return timeit.Timer("import torch").timeit(1)


def annotation_text(q):
    import typing

    return typing.ForwardRef("len('text')")._evaluate(globals(), {}, frozenset())


def pickled_exec(q):
    import pickle

    class Exec:
        def __reduce__(self):
            return (exec, ("import torch",))

    return pickle._loads(pickle.dumps(Exec()))


def named_tuple_config(q):
    from typing import NamedTuple

    Config = NamedTuple("Config", [("n_head", "int")])
    return Config(2).n_head


def borrowed_name(q):
    import importlib.machinery

    loader = importlib.machinery.SourceFileLoader("routes_again", __file__)
    return loader.source_to_code(b"import torch\n", __file__)


def bdb_frames(q):
    import bdb

    try:
        raise KeyError("probe")
    except KeyError as exc:
        return bdb.Bdb().get_stack(None, exc.__traceback__)


def asyncio_frames(q):
    import asyncio

    async def walk():
        return asyncio.current_task().get_stack()

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(walk())
    finally:
        loop.close()


def onnx_attention(q):
    import torch.onnx.ops

    return torch.onnx.ops.attention(q, q, q)[0]


def jit_scripted(q):
    @torch.jit.script
    def scaled(x: torch.Tensor) -> torch.Tensor:
        return x * 2.0

    return scaled(q)


def sympy_imported(q):
    import sympy

    return sympy.Symbol("n")


def import_callback_frames(q):
    """The candidate's code called back by a library's module while it is imported."""
    import builtins
    import sys

    real = builtins.__import__

    def spy(name, *args, **kwargs):
        sys._getframe(1)
        return real(name, *args, **kwargs)

    builtins.__import__ = spy
    try:
        import mailbox
    finally:
        builtins.__import__ = real
    return mailbox


def vmap_sdpa(q):
    """functorch's batching rule for SDPA, a kernel of its own on its own dispatch key."""
    return torch.vmap(lambda a: F.scaled_dot_product_attention(a, a, a, is_causal=True))(q)


def vmap_private_math(q):
    return torch.vmap(lambda a: torch._scaled_dot_product_attention_math(a, a, a)[0])(q)


def meta_sdpa(q):
    x = q.detach().to("meta")
    return F.scaled_dot_product_attention(x, x, x)


def traced_sdpa(q):
    return torch.jit.trace(lambda a: F.scaled_dot_product_attention(a, a, a), (q.detach(),))(q)


def onnx_registry(q):
    """The ONNX attention operator, in its own namespace, by the registry."""
    return torch.ops.onnx.Attention.opset23(q, q, q)[0]


def onnx_decomposition(q):
    """ONNX's attention as torch keeps it undecorated, in the table of its decompositions (the
    hand-written path, which calls no attention operator)."""
    table = torch.onnx.ops.aten_decompositions()
    attention = next(f for name, f in table.items() if "Attention" in str(name))
    return attention(q, q, q, softmax_precision=1, qk_matmul_output_mode=3)[0]


def custom_op_function(q):
    """ONNX's attention as its custom operator holds it, for its CPU kernel."""
    from torch.onnx.ops import _impl

    return _impl.attention_23._init_fn(q, q, q, softmax_precision=1)[0]


def printed_traceback(q):
    """An error printed where it was caught, and re-raised as the contract asks."""
    import traceback

    try:
        raise ValueError("embedding_dim must be divisible by num_heads")
    except ValueError:
        traceback.print_exc()
        return traceback.format_exc()


def locals_of_frames(q):
    """The same reader asked for the frames' locals: the worker's among them."""
    import traceback

    return traceback.StackSummary.extract(traceback.walk_stack(None), capture_locals=True)


def evaluated_annotation(q):
    import typing

    def attend(x: "torch.Tensor", masks: "list[torch.Tensor] | None" = None) -> "torch.Tensor":
        return x

    return typing.get_type_hints(attend)


def called_annotation(q):
    import typing

    def attend(x: "__import__('os').getpid()") -> None:
        return x

    return typing.get_type_hints(attend)


def typing_subscripts(q):
    """Annotations as public code writes them: new generic aliases, a generic class of its own."""
    import typing

    T = typing.TypeVar("T")

    class Box(typing.Generic[T]):
        pass

    pair = typing.Tuple[torch.Tensor, torch.Tensor]
    table = typing.Dict[str, typing.Optional[Box[int]]]
    call = typing.Callable[[torch.Tensor], torch.Tensor]
    return [pair, table, call, typing.Literal["mean", "sum"], typing.Union[float, torch.Tensor]]


def checkpointed(q):
    """Activation checkpointing and a compiler hint, which import torch._dynamo lazily."""
    import torch.utils.checkpoint

    @torch.compiler.disable
    def double(a):
        return a * 2

    return torch.utils.checkpoint.checkpoint(double, q, use_reentrant=False)
