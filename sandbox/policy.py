"""What the policy guard refuses and where it finds it: torch's attention operators and Python
functions, the refusing code put in their place, and the lists the audit hook reads.
"""

from __future__ import annotations

import dis
import functools
import gc
import inspect
import os
import re
import sys
import threading
import types
from typing import Any, NamedTuple

import torch
from torch import nn

from sandbox.protocol import ATTENTION, TraceEntry, family_of

ATTENTION_MODULES = (
    "torch.nn.attention.flex_attention",
    "torch.ao.nn.quantizable",
    "torch.ao.nn.quantized",
    "torch.onnx.ops",
)
"""Torch's modules that define attention in Python, imported before the guard is installed."""
OTHER_DEVICES = re.compile(
    r"(CUDA|HIP|XLA|MPS|IPU|XPU|HPU|VE|Lazy|MTIA|MAIA|PrivateUse\d|FPGA|Vulkan|Metal)$"
)
"""Dispatch keys of devices other than the CPU (`AutogradCUDA`, `SparseXPU`): no tensor of
this process reaches them. Every other key with a kernel of its own is guarded (CPU and its
variants, autograd, autocast, meta, the tracer, functorch's vmap keys): a key nobody listed
is guarded, not passed."""
COMPOSITE = "CompositeImplicitAutograd"
"""The alias key of kernels that decompose: one kernel of ours there replaces them all."""
NO_BYTECODE = "/proc/no-bytecode-here"
"""Where cached bytecode is looked for in a problem's child: nowhere, so that every module
it imports from then on is compiled from its source."""
REFUSED_EVENT = "attention-grader.refused"
"""The audit event a neutered torch function raises: the hook records it and refuses."""
TRACED_EVENT = "attention-grader.traced"
TRACER = """
def scaled_dot_product_attention(*args, **kwargs):
    __import__("sys").audit("attention-grader.traced", args, kwargs)
    return ORIGINAL(*args, **kwargs)
"""
MAX_EVENTS = 20
FRAME_ATTRIBUTES = {"tb_frame", "gi_frame", "cr_frame", "ag_frame"}
FRAME_EVENTS = {"sys._getframe", "code.__new__", "function.__new__"}
"""Audit events (with a frame's attributes) refused when the candidate's code asked for them,
directly or through a library: frames reach the grader's objects, new code and functions are
code the host never read."""
CALLS = ("CALL", "PRECALL", "IMPORT", "BUILD_CLASS", "LOAD_BUILD_CLASS", "MAKE_FUNCTION")
"""Instructions that call, import or make functions: text evaluated by `typing` runs none."""
FRAME_HANDLERS = ("inspect.py", "traceback.py")
"""Standard library files that hand frames on to their caller (`inspect.currentframe`,
`traceback.walk_stack`): a frame one of them reads is for whoever called it."""
SUMMARIZER = "_extract_from_extended_frame_gen"
"""`traceback.StackSummary`'s reader of frames into text (their file, line and name)."""
FRAME_READERS = (
    "typing.py", "collections/__init__.py", "enum.py", "dataclasses.py", "logging/__init__.py",
    "warnings.py", "abc.py", "functools.py",
)  # fmt: skip
"""Standard library files that read a frame for themselves (a caller's module name or line)
and hand none on."""
LIBRARY_READERS = ("typing_extensions.py",)
"""Installed modules that do the same (torch's `typing_extensions`, a caller's module name for
a generic alias)."""
CODE_MAKERS = ("dataclasses.py", os.path.join("collections", "__init__.py"))
"""The standard library's files that make classes' code from text (a dataclass's methods, a
namedtuple's `__new__`), out of identifiers they check."""
TEXT_RUNNERS = ("timeit.py", "doctest.py", "code.py", "codeop.py", "pdb.py", "runpy.py")
"""Standard library modules that run the text they are given: never a code maker, even while
imported."""
REFUSED_EVENTS = (
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
    "sys.settrace",
    "sys.setprofile",
    "sys._current_frames",
    "marshal.load",
    "ctypes.",
)
"""Audit events (or their prefixes) refused from any code once candidate code may run."""
ELSEWHERE = (
    "os.fork",
    "os.forkpty",
    "os.posix_spawn",
    "os.spawn",
    "os.system",
    "subprocess.Popen",
    "_thread.start_new_thread",
)
"""Audit events of work starting in another process or thread, where the operation counter
(this thread's dispatch mode) never sees what it runs: while it counts, each is unseen work."""


class Refused(RuntimeError):
    """A call the problem's policy forbids, refused in the process that made it."""


REFUSAL = ": refused by the grader's policy for this problem"
"""How a `Refused`'s message ends, after what was refused."""


class Canary(Exception):
    """Raised by the guard's own kernels while it checks that they are still in place."""


SEALED_BUILTINS = {
    "RuntimeError": RuntimeError,
    "ImportError": ImportError,
    "getattr": getattr,
    "isinstance": isinstance,
    "len": len,
    "__import__": __import__,
}


@functools.cache
def compiled(source: str) -> types.CodeType:
    """The code of the grader's own `source`, compiled once (by the worker, before it forks)."""
    return compile(source, "<attention-grader>", "exec")


def sealed_space(source: str, **names: Any) -> dict[str, Any]:
    """The functions `source` defines, with globals of their own (`names` and a few builtins),
    not this module's: a function the candidate's code can reach must not lead to the worker's
    objects."""
    space: dict[str, Any] = {"__builtins__": SEALED_BUILTINS, **names}
    exec(compiled(source), space)
    return {k: v for k, v in space.items() if inspect.isfunction(v)}


def sealed(source: str, name: str, **names: Any) -> Any:
    """The function `name` that `source` defines, with globals of its own (`sealed_space`)."""
    return sealed_space(source, **names)[name]


StubModule = type(
    "StubModule",
    (nn.Module,),
    {
        "__doc__": "The grader's own module handed to a candidate's function: layers and "
        "attributes only.",
        "forward": sealed(
            "def forward(self, *args, **kwargs):\n"
            "    raise RuntimeError('the grader\\'s module may not be called: use its layers')\n",
            "forward",
        ),
    },
)


def attention_operators() -> dict[str, list[str]]:
    """Every operator of the attention families (`aten::name.overload`) and the dispatch keys
    a CPU tensor can reach it on where it has a kernel of its own; `COMPOSITE` stands for
    every key where its kernel is the composite one (it decomposes into other operators)."""
    found: dict[str, list[str]] = {}
    for op in sorted(torch._C._dispatch_get_all_op_names()):
        if not ATTENTION.search(op.partition("::")[2]):
            continue
        keys = found.setdefault(op, [])
        for line in torch._C._dispatch_dump_table(op).splitlines():
            key, _, kernel = line.partition(": ")
            if "fallthrough" in kernel or "[backend fallback]" in kernel:
                continue
            if key == "Undefined" or OTHER_DEVICES.search(key):
                continue
            key = COMPOSITE if kernel.endswith("[math kernel]") else key
            if key not in keys:
                keys.append(key)
    return {op: keys for op, keys in found.items() if keys}


def op_schema(op: str) -> Any:
    """The schema of `aten::name.overload`."""
    base, _, overload = op.partition(".")
    for schema in torch._C._jit_get_schemas_for_operator(base):
        if schema.overload_name == overload:
            return schema
    raise LookupError(op)


def describe_call(fn: str, names: list[str], args: Any, kwargs: dict[str, Any]) -> TraceEntry:
    """A traced call, its arguments bound by name (`names`, the operator's, in order); the SDPA
    fields are read where it has them."""
    bound = dict(zip(names, args, strict=False))
    bound.update(kwargs)
    query, scale = bound.get("query"), bound.get("scale")
    return {
        "fn": fn,
        "is_causal": bool(bound.get("is_causal", False)),
        "dropout_p": float(bound.get("dropout_p", 0.0)),
        "scale": None if scale is None else float(scale),
        "attn_mask": bound.get("attn_mask") is not None,
        "query_shape": list(query.shape) if isinstance(query, torch.Tensor) else None,
    }


class PythonTarget(NamedTuple):
    """Something of torch's, written in Python, that computes attention: a function (neutered
    by giving it refusing code, so every reference to it refuses) or an attribute of a class
    (a module's `forward`, a higher-order operator's `__call__`), replaced."""

    qualname: str
    family: str
    function: Any  # a function, or the class whose attribute is replaced
    attribute: str | None


def python_targets() -> list[PythonTarget]:
    """Torch's Python functions, modules and higher-order operators of the attention families,
    from every torch module loaded (`ATTENTION_MODULES` imported first): those a module names,
    then every other function of torch's of those families, however it is held (a custom
    operator's own, what a decorator wrapped, an entry of a table such as the ONNX
    decompositions), so that no copy is left to call."""
    found: dict[int, PythonTarget] = {}
    for module_name, module in list(sys.modules.items()):
        if module is None or module_name.split(".")[0] != "torch":
            continue
        for attr, value in list(vars(module).items()):
            family = family_of(attr)
            if family is None or getattr(value, "__module__", None) != module_name:
                continue
            qualname = f"{module_name}.{attr}"
            if isinstance(value, type) and issubclass(value, nn.Module):
                for method in own_methods(value):  # forward, and what holds its work
                    found[id(vars(value)[method])] = PythonTarget(
                        f"{qualname}.{method}", family, value, method
                    )
            elif inspect.isfunction(value):
                found[id(value)] = PythonTarget(qualname, family, value, None)
    operators = getattr(torch._ops, "_higher_order_ops", {})
    for name, operator in operators.items():
        family = family_of(name)
        if family is not None:
            qualname = f"torch.ops.higher_order.{name}"
            found[id(operator)] = PythonTarget(qualname, family, type(operator), "__call__")
    for function in [f for f in gc.get_objects() if type(f) is types.FunctionType]:
        held = None if id(function) in found else held_target(function)
        if held is not None:
            found[id(function)] = held
    return list(found.values())


def held_target(function: types.FunctionType) -> PythonTarget | None:
    """A function of torch's of an attention family, by its name, whose code can be taken from
    it: one without a closure (one with a closure delegates to such a function, or to a guarded
    operator)."""
    module = function.__module__
    if not isinstance(module, str) or module.split(".")[0] != "torch" or function.__closure__:
        return None
    family = family_of(function.__name__)
    if family is None:
        return None
    return PythonTarget(f"{module}.{function.__qualname__}", family, function, None)


def own_methods(cls: type) -> list[str]:
    """The methods a class defines itself but its dunders: `forward`, and the helpers that may
    hold the whole computation (a quantizable `MultiheadAttention`'s `_forward_impl`)."""
    return [
        name
        for name, value in vars(cls).items()
        if inspect.isfunction(value) and not (name.startswith("__") and name.endswith("__"))
    ]


class Neutered(NamedTuple):
    """One of torch's Python attention functions given refusing code, and what it had."""

    family: str
    owner: Any  # the function whose code was replaced, or what holds the replaced attribute
    attribute: str | None
    refusing: Any  # the refusing code, or the refusing function
    original: Any  # (code, defaults, keyword defaults), or the attribute's value (or MISSING)


def in_place(item: Neutered) -> Any:
    """What is where the refusing code or function was put."""
    if item.attribute is None:
        return item.owner.__code__
    return getattr(item.owner, item.attribute, None)


MISSING = object()
"""An attribute a class inherited rather than held: restored by deleting ours."""


def refusing(qualname: str) -> Any:
    """A function that records a refused call of `qualname` (the audit hook does) and raises;
    its code refers to builtins only, so it can replace the code of any closure-free function."""
    source = (
        "def refused(*args, **kwargs):\n"
        f"    __import__('sys').audit({REFUSED_EVENT!r}, {qualname!r})\n"
        f"    raise RuntimeError({qualname + ': refused by the grader'!r})\n"
    )
    return sealed(source, "refused")


class Flags(threading.local):
    """The guard's state of one thread."""

    depth = 0  # inside an allowed public call: its private operators run beneath it
    backward = False  # the worker backpropagates: an allowed family's backward runs


def names_only(code: Any) -> bool:
    """Whether code runs no call: names, attributes, subscripts and literals (an annotation
    such as `Optional[torch.Tensor]`), nor holds code of its own."""
    if any(isinstance(c, types.CodeType) for c in code.co_consts):
        return False
    return not any(i.opname.startswith(CALLS) for i in dis.get_instructions(code))
