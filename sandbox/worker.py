"""The sandbox worker: runs a candidate's code on the probes the host asked for, writes data back.

Usage: python3 worker.py --submission SUB_DIR --out OUT_DIR [--emit-tar] [--clean-scratch] < JOB
       python3 worker.py --out OUT_DIR --serve K < SUBMISSIONS   (PID 1 of a container only)

The job arrives on stdin, a pipe: an index (each problem's id, timeout and size), then each
problem's part (its probes as JSON, the tensors they name as safetensors). The worker imports
torch once, splices each part into a memory file of its own without reading it, then forks one
child per problem. A child loads its own part, closes every other one, sets what it inherited
back to the worker's state at its start, gives up running other programs (a seccomp filter),
arms the policy guard (see "the policy guard" below:
installed once, before any fork), imports the candidate's entry file, runs that problem's
probes and appends, per probe, a record to
`OUT_DIR/<problem>/results.bin` (its JSON and its tensors as safetensors, each after its u64
length); its stdout and stderr go to files beside it. The parent writes
`OUT_DIR/worker.json` (versions) first, a `started` marker before each child, and, once every
process the problem started has been killed and reaped, how it ended in `exit.json`. With
`--clean-scratch` (a container's worker), /tmp and /dev/shm are emptied before each problem.

With `--emit-tar` the parent streams those files to its stdout as a ustar archive, each as soon
as it is final, and deletes a problem's files once sent. It is the only process that can write
there: it is not dumpable (no other process of the user can open its /proc files, memory or
descriptors) and every child closes the pipe before any candidate code runs.

With `--serve K` (warm workers) the worker imports torch once and then grades up to K
submissions one after another, each read from stdin (a header naming its files, the files,
then its job), its problems run as above, each in a child of this process, PID 1 of the
container (the kernel drops a signal a child sends it; a child's `kill(-1)` reaches no other
process), the result stream sent to the host in frames (R ready, D data, E end). Once the
submission is done the worker kills every other process of the container, empties /tmp,
/dev/shm and OUT_DIR, removes System V IPC objects and checks that nothing is left and that
its own limits, niceness, I/O priority, affinity and scheduling are unchanged; it stops (and
the host replaces its container) after anything but a clean run.

Nothing here judges anything: the host compares the data with its own reference run. This file
must stay self-contained (stdlib, torch, safetensors): it is the only grader code in the image,
and the host imports it too, to run the reference through the very same probe executor. It
defines every record of the protocol, both ways, once (see "the protocol" below).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import dis
import errno
import gc
import hashlib
import hmac
import importlib
import importlib.machinery
import inspect
import json
import math
import os
import platform
import re
import reprlib
import resource
import select
import signal
import stat
import struct
import sys
import sysconfig
import tarfile
import threading
import time
import traceback
import types
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple, NoReturn, TypedDict, cast, final

import torch
from safetensors import TensorSpec, serialize
from safetensors.torch import load as load_tensors
from torch import nn
from torch.overrides import TorchFunctionMode

PROTOCOL_VERSION = 8
RESULTS_FILE = "results.bin"
RECORD_LENGTH = struct.Struct("<Q")
MAX_INDEX_BYTES = 1 << 20
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
X32_SYSCALL_BIT = 0x40000000
CLONE_THREAD = 0x00010000
SYSCALLS = {"x86_64": (0xC000003E, 59, 322, 56, 435), "aarch64": (0xC00000B7, 221, 281, 220, 435)}
"""The audit architecture and the numbers of execve, execveat, clone and clone3, by machine."""
PR_SET_CHILD_SUBREAPER = 36
IOPRIO_WHO_PROCESS = 1
IOPRIO_SYSCALLS = {"x86_64": (251, 252), "aarch64": (30, 31)}
"""ioprio_set and ioprio_get, which Python does not wrap, by machine."""
MADV_COLLAPSE = 25
HUGE_PAGE = 2 << 20
MAX_MESSAGE = 2000
MAX_FRAMES = 8
MAX_OUTPUTS = 16

Json = Any
Scalar = bool | int | float | str | None
AttrValue = Scalar | dict[str, Scalar]  # an attribute as `read_attr` shows it
Namespace = dict[str, Any]
Stage = Literal["init", "inspect", "load", "setup", "call", "import"]
Mode = Literal["host", "sandbox"]
"""Where a probe runs: "host" for the grader's trusted reference (an interrupt propagates),
"sandbox" for a candidate's code (every exception is theirs, and described)."""


# ---------------------------------------------------------------------------- the protocol
# Every record that crosses the trust boundary, defined once. The host writes the job records
# (`grader/sandboxing/protocol.py`, `grader/verdict/plan.py`) and reads the result records with
# strict pydantic models of the same names (`grader/sandboxing/results.py`), which a test holds
# field for field to these.

# -- the job: host to worker


class IndexEntry(TypedDict):
    id: str
    timeout: float
    size: int  # bytes of the problem's part in the stream
    scope: list[str]  # the submission's files the problem may run: its entry and what it imports


class JobIndex(TypedDict):
    version: int  # PROTOCOL_VERSION: a worker refuses a job of any other
    problems: list[IndexEntry]


class TensorKey(TypedDict):
    tensor: str  # the key of an input tensor


@final
class TensorArgument(TensorKey, total=False):
    layout: str  # "noncontiguous": handed over as a non-contiguous view
    grad: bool  # requires_grad, so that its gradient is sent back


@final
class ValueArgument(TypedDict):
    value: Json


class Stub(TypedDict):
    linears: dict[str, dict[str, str]]  # layer -> weight/bias -> tensor key
    attrs: dict[str, Json]
    dtype: str


@final
class StubArgument(TypedDict):
    stub: Stub


Argument = TensorArgument | ValueArgument | StubArgument


class CallArguments(TypedDict):
    args: list[Argument]
    kwargs: dict[str, Argument]


class Call(CallArguments, total=False):
    seed: int | None  # torch.manual_seed before the call
    backward: list[str | None]  # per output, the key of the gradient to backpropagate


class SetupKind(TypedDict):
    op: Literal["double", "set"]


class SetupOp(SetupKind, total=False):
    name: str
    value: Json


class ProbeCalls(TypedDict):
    symbol: str
    calls: list[Call]


class ProbeRequest(ProbeCalls, total=False):
    """What a probe asks: build the symbol (modules), load weights, set up, call, inspect."""

    init: dict[str, Json] | None  # a module's constructor arguments; None for a function
    weights: dict[str, str] | None  # parameter name -> tensor key
    setup: list[SetupOp]
    mode: Literal["eval", "train"]
    inspect: list[str] | None  # attributes to read; None: no inspection
    count_ops: bool  # count the torch functions each call runs
    expect_error: bool  # read by the host only: the reference itself raises


class Probe(ProbeRequest):
    id: str


class ProblemJob(TypedDict):
    """A problem's part of the job, besides its tensors."""

    entry: str
    refuse: list[str]  # the attention families (`FAMILIES`) the problem forbids
    key: str  # hex: the key that seals each record the problem's child writes (`sealer`)
    probes: list[Probe]


# -- the results: worker to host


class Frame(TypedDict):
    file: str
    line: int | None
    code: str


class ErrorInfo(TypedDict):
    stage: Stage
    call: int
    type: str
    message: str
    frames: list[Frame]


class TensorOut(TypedDict):
    kind: Literal["tensor"]
    key: str | None
    shape: list[int]
    dtype: str
    device: str
    contiguous: bool
    requires_grad: bool


class ValueOut(TypedDict):
    kind: Literal["value"]
    type: str
    repr: str


class TracedCall(TypedDict):
    fn: str


class TraceEntry(TracedCall, total=False):
    is_causal: bool | None
    dropout_p: float | None
    scale: float | None
    attn_mask: bool | None
    query_shape: list[int] | None


class OpCount(TypedDict):
    """The torch functions one call ran: all of them, the products among them and the softmaxes
    (`PRODUCTS`, `SOFTMAXES`)."""

    all: int
    products: int
    softmaxes: int
    largest: int  # the elements of the largest of those softmaxes (heads at once, or one)
    unseen: int  # calls of the candidate's code outside the counter's sight


class CallResult(TypedDict):
    outputs: list[TensorOut | ValueOut]
    container: str | None
    length: int
    grads: dict[str, str | None]
    trace: list[TraceEntry]
    ops: OpCount | None  # what the call ran, where the probe asked
    seconds: float


class ParamInfo(TypedDict):
    name: str
    shape: list[int]
    dtype: str
    requires_grad: bool
    storage: int


class BufferInfo(TypedDict):
    name: str
    shape: list[int]
    dtype: str
    persistent: bool


class ModuleInfo(TypedDict):
    name: str
    type: str
    instance: int


class InspectInfo(TypedDict):
    params: list[ParamInfo]
    buffers: list[BufferInfo]
    modules: list[ModuleInfo]
    tensor_attrs: list[str]
    dropouts: dict[str, float]
    attrs: dict[str, AttrValue]


class Mismatch(TypedDict):
    name: str
    expected: list[int]
    got: list[int]


class LoadInfo(TypedDict):
    missing: list[str]
    unexpected: list[str]
    mismatched: list[Mismatch]


class PolicyEvent(TypedDict):
    """A call the policy guard refused, or a sign that it was tampered with."""

    kind: Literal["forbidden", "tampering"]
    what: str


class ProbeData(TypedDict):
    id: str
    error: ErrorInfo | None
    inspect: InspectInfo | None
    load: LoadInfo | None
    calls: list[CallResult]
    policy: list[PolicyEvent]  # what the guard refused or found changed during the probe


class ImportStatus(TypedDict):
    import_error: ErrorInfo | None
    policy: list[PolicyEvent]


class ProblemExit(TypedDict):
    exit_code: int | None
    signal: int | None
    timed_out: bool
    seconds: float
    stray_processes: int


class WorkerReport(TypedDict):
    version: int
    torch: str
    python: str


# -- warm serving (`--serve`): each submission's header, host to worker, and its end frame


class SubmissionFile(TypedDict):
    name: str  # relative to the submission's folder
    size: int  # its bytes follow the header, in the header's order


class SubmissionHeader(TypedDict):
    version: int  # PROTOCOL_VERSION: a worker refuses a submission of any other
    wall: float  # seconds the submission may run
    files: list[SubmissionFile]


class SubmissionEnd(TypedDict):
    exit_code: int | None  # the submission's child's
    signal: int | None
    timed_out: bool
    seconds: float
    oom_kills: int | None  # processes the memory cgroup killed meanwhile (None: unknown)
    ipc_removed: int
    leftovers: list[str]  # what the clean-up found still there, at most 20
    state_changed: bool  # the worker's own limits or scheduling were changed
    retire: bool  # the container must not serve another submission


# ---------------------------------------------------------------------------- the policy guard
# A problem's policy is enforced where a call happens: in the candidate's own process, at
# torch's layers. Every operator of the attention families that torch's dispatcher knows
# (derived from its registry: public or private, on every dispatch key a CPU tensor reaches)
# runs a kernel of ours first; torch's Python functions, modules and higher-order operators
# that compute attention are neutered, in the problem's child, for the families it refuses. A
# refused call raises `Refused` and is recorded: it costs the values it would have produced.
# An allowed family's public operator runs (and is traced) with its private operators beneath
# it. An audit hook, which Python code cannot remove, refuses code that was not handed in (or
# is not the problem's), code made from text, frames, the garbage collector, ctypes, threads,
# and a seccomp filter refuses every exec. Nothing the candidate's code can reach leads to the
# guard's objects: the worker's module leaves `sys.modules`, and what the candidate is handed
# (the stub module, the operation counter, the import hook) has globals of its own.

FAMILIES = ("multi_head_attention", "scaled_dot_product_attention")
ATTENTION = re.compile(r"attention|sdpa|_sdp|transformer|multi_?head", re.IGNORECASE)
"""Names of the attention families: torch's operators, Python functions and modules."""
MULTI_HEAD = re.compile(r"multi_?head|transformer", re.IGNORECASE)
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


class Refused(RuntimeError):
    """A call the problem's policy forbids, refused in the process that made it."""


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


def sealed_space(source: str, **names: Any) -> dict[str, Any]:
    """The functions `source` defines, with globals of their own (`names` and a few builtins),
    not this module's: a function the candidate's code can reach must not lead to the worker's
    objects."""
    space: dict[str, Any] = {"__builtins__": SEALED_BUILTINS, **names}
    exec(compile(source, "<attention-grader>", "exec"), space)
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


def family_of(name: str) -> str | None:
    """The attention family a name belongs to (an operator, a function, a module), if any."""
    if not ATTENTION.search(name):
        return None
    return FAMILIES[0] if MULTI_HEAD.search(name) else FAMILIES[1]


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
    from every torch module loaded (`ATTENTION_MODULES` imported first)."""
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
                if "forward" in vars(value):
                    found[id(value)] = PythonTarget(f"{qualname}.forward", family, value, "forward")
            elif inspect.isfunction(value):
                found[id(value)] = PythonTarget(qualname, family, value, None)
    operators = getattr(torch._ops, "_higher_order_ops", {})
    for name, operator in operators.items():
        family = family_of(name)
        if family is not None:
            qualname = f"torch.ops.higher_order.{name}"
            found[id(operator)] = PythonTarget(qualname, family, type(operator), "__call__")
    return list(found.values())


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


@final
class Guard:
    """The policy guard: installed once per worker process, before any fork; armed in each
    problem's child with the families its problem refuses, before the candidate's code is
    imported. Unarmed it lets every call through (the worker's own warm-up; the host's reference
    runs never install it)."""

    def __init__(self) -> None:
        self.armed = False
        self.refuse: frozenset[str] = frozenset(FAMILIES)
        self.policy = self.refuse  # as armed: what `refuse` must still be
        self.local = Flags()
        self.canary = False
        self.trace: list[TraceEntry] = []
        self.events: list[PolicyEvent] = []
        self.kernels: dict[tuple[str, str], str] = {}  # (operator, key) -> its kernel's origin
        self.targets: list[PythonTarget] = []
        self.neutered: list[Neutered] = []
        self.sdpa: Any = None
        self.root = ""
        self.allowed: dict[str, bytes | None] = {}  # the problem's files: real path -> bytes
        self.trusted: tuple[str, ...] = ()  # the libraries' folders and, last, the worker's
        self.libraries: tuple[str, ...] = ()  # the libraries' folders
        self.makers: tuple[str, ...] = ()  # the library files that may make code from text
        self.runners: tuple[str, ...] = ()  # the library files that run text they are given
        self.handlers: tuple[str, ...] = ()  # the library files that hand frames on
        self.readers: tuple[str, ...] = ()  # the code that may read a frame for itself
        self.typing = ""
        self.ast = ""
        self.auditing = False

    # -- installing: trusted code only, before any candidate code runs

    def install(self) -> None:
        """Put a kernel of ours in front of every attention operator on every key a CPU
        tensor reaches, and find torch's Python attention to neuter when armed. A torch too old
        to hand out the kernels it runs (`torch.library.get_kernel`, 2.9) gets its kernels when
        the guard is armed: refusing ones, for the refused families only."""
        for name in ATTENTION_MODULES:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
        self.sdpa = torch._C._nn.scaled_dot_product_attention
        paths = sysconfig.get_paths()
        libraries = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
        self.libraries = tuple(os.path.join(os.path.realpath(p), "") for p in sorted(libraries))
        worker_folder = os.path.join(os.path.dirname(os.path.realpath(__file__)), "")
        self.trusted = (*self.libraries, worker_folder)
        stdlib = os.path.realpath(paths["stdlib"])
        self.makers = tuple(os.path.join(stdlib, f) for f in CODE_MAKERS)
        self.runners = tuple(os.path.join(stdlib, f) for f in TEXT_RUNNERS)
        self.handlers = tuple(os.path.join(stdlib, f) for f in FRAME_HANDLERS)
        torch_folder = os.path.join(os.path.dirname(os.path.realpath(torch.__file__)), "")
        readers = [os.path.join(stdlib, f) for f in FRAME_READERS]
        purelib = os.path.realpath(paths.get("purelib", stdlib))
        readers += [os.path.join(purelib, f) for f in LIBRARY_READERS]
        self.readers = (*readers, torch_folder, worker_folder, "<frozen")
        self.typing = os.path.join(stdlib, "typing.py")
        self.ast = os.path.join(stdlib, "ast.py")
        if hasattr(torch.library, "get_kernel"):
            self.register_all(refuse_only=False)
        self.targets = python_targets()
        self.neuter()

    def library(self, namespace: str) -> Any:
        """Our library of kernels for an operator namespace (`aten`, `onnx`), kept in
        `LIBRARIES`, out of the candidate's reach, for the process's life."""
        for library in LIBRARIES:
            if library.ns == namespace:
                return library
        library = torch.library.Library(namespace, "IMPL")
        LIBRARIES.append(library)
        return library

    def register_all(self, refuse_only: bool) -> None:
        """Our kernels for every attention operator (with `refuse_only`, for those of the
        refused families, refusing whatever the state), and what the table then says."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
            for op, keys in attention_operators().items():
                if refuse_only and family_of(op.partition("::")[2]) not in self.refuse:
                    continue
                names = [a.name for a in op_schema(op).arguments]
                library = self.library(op.partition("::")[0])
                for key in keys:
                    self.register(library, op, key, names, refuse_only)
        if hasattr(torch.library, "get_kernel"):
            for op, key in self.kernels:
                self.kernels[(op, key)] = repr(torch.library.get_kernel(op, key))

    def register(
        self, library: Any, op: str, key: str, names: list[str], refuse_only: bool
    ) -> None:
        """A kernel of ours in front of `op` on `key`, calling the kernel it replaces."""
        runtime_key = "CPU" if key == COMPOSITE else key
        original = None
        if not refuse_only:
            try:
                original = torch.library.get_kernel(op, runtime_key)
            except ValueError:  # a key torch's Python side cannot name (MkldnnCPU)
                return
        name = op.partition("::")[2]
        try:
            library.impl(name, self.kernel(name, names, original), key, with_keyset=True)
        except (RuntimeError, ValueError):  # a key this torch cannot register on
            return
        checked = ("CPU", "AutogradCPU") if key == COMPOSITE else (key,)
        self.kernels.update({(op, k): "" for k in checked})

    def kernel(self, name: str, names: list[str], original: Any) -> Callable[..., Any]:
        """The kernel of ours in front of operator `name` (`name.overload`) on one key: a
        refused family's call is refused whatever else holds; an allowed family's public
        operator is traced, its private ones run only beneath it or in its backward pass."""
        family = family_of(name)
        public = not name.startswith("_")
        backward = name.partition(".")[0].endswith("_backward")
        fn = name.partition(".")[0]

        def guarded(keyset: Any, *args: Any, **kwargs: Any) -> Any:
            if self.canary:
                raise Canary
            if original is None or (self.armed and family in self.refuse):
                self.refused(f"torch's operator aten::{name}")
            local = self.local
            if self.armed and not local.depth and not (backward and local.backward):
                if not public:
                    self.refused(f"torch's operator aten::{name}")
                self.trace.append(describe_call(fn, names, args, kwargs))
                local.depth += 1
                try:
                    return original.call_boxed(keyset, *args, **kwargs)
                finally:
                    local.depth -= 1
            return original.call_boxed(keyset, *args, **kwargs)

        return guarded

    # -- arming, in a problem's child

    def arm(self, refuse: list[str], root: str, allowed: dict[str, bytes | None]) -> None:
        """Enforce the problem's policy from here on: refuse these families, accept code only
        from the libraries and from the problem's own files under `root` (`allowed`: each real
        path with its bytes as handed in, or None where the folder is read-only), read the
        candidate's modules from source only, and take this module out of the candidate's
        reach."""
        unknown = set(refuse) - set(FAMILIES)
        if unknown:
            raise ValueError(f"unknown policy families {sorted(unknown)}")
        self.refuse = self.policy = frozenset(refuse)
        self.root, self.allowed = root, allowed
        self.restore_allowed()
        source_only(root)
        if not self.kernels:
            self.register_all(refuse_only=True)
            self.trace_by_name()
        unlisted()
        self.armed = True
        sys.addaudithook(self.audit)

    def trace_by_name(self) -> None:
        """Where no kernel of ours fronts SDPA (a torch without get_kernel) and its family is
        allowed, `F.scaled_dot_product_attention` is traced by its Python name."""
        if FAMILIES[1] in self.refuse:
            return
        functional = torch.nn.functional
        original = functional.scaled_dot_product_attention
        functional.scaled_dot_product_attention = sealed(
            TRACER, "scaled_dot_product_attention", ORIGINAL=original
        )

    def neuter(self) -> None:
        """Give torch's Python attention refusing code: a function's own code where it has no
        closure (every reference to it then refuses), else the attribute or module entry that
        holds it. The originals stay with the guard, for the families a problem allows."""
        for target in self.targets:
            refused = refusing(target.qualname)
            function, attribute = target.function, target.attribute
            if attribute is None and not function.__closure__:
                original = (function.__code__, function.__defaults__, function.__kwdefaults__)
                function.__code__, function.__defaults__ = refused.__code__, None
                function.__kwdefaults__ = None
                self.neutered.append(
                    Neutered(target.family, function, None, refused.__code__, original)
                )
                continue
            if attribute is None:
                function, attribute = sys.modules[function.__module__], function.__name__
            original = vars(function).get(attribute, MISSING)
            if hasattr(original, "__wrapped__"):  # a decorated function: torch reads this
                refused.__wrapped__ = refused
            setattr(function, attribute, refused)
            self.neutered.append(Neutered(target.family, function, attribute, refused, original))

    def restore_allowed(self) -> None:
        """Give back their code to torch's Python attention of the families the problem allows."""
        kept = []
        for item in self.neutered:
            if item.family in self.refuse:
                kept.append(item)
            elif item.attribute is None:
                owner = item.owner
                owner.__code__, owner.__defaults__, owner.__kwdefaults__ = item.original
            elif item.original is MISSING:
                delattr(item.owner, item.attribute)
            else:
                setattr(item.owner, item.attribute, item.original)
        self.neutered = kept

    def refused(self, what: str, kind: Literal["forbidden", "tampering"] = "forbidden") -> NoReturn:
        event: PolicyEvent = {"kind": kind, "what": what[:300]}
        if event not in self.events and len(self.events) < MAX_EVENTS:
            self.events.append(event)
        raise Refused(f"{what}: refused by the grader's policy for this problem")

    def take_events(self) -> list[PolicyEvent]:
        events, self.events = self.events, []
        return events

    # -- the audit hook

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        """Refuse, where it happens: a neutered function's call; code that is not the problem's
        (run from a file not as handed in or not imported by the problem's files, compiled from
        text or under another file's name); and what reaches the grader's objects or runs
        unseen (frames, the garbage collector, ctypes, threads, trace hooks)."""
        if self.auditing or not self.armed:
            return
        if event == REFUSED_EVENT:
            self.refused(str(args[0]))
        if event == TRACED_EVENT:
            names = [a.name for a in op_schema("aten::scaled_dot_product_attention").arguments]
            self.trace.append(describe_call("scaled_dot_product_attention", names, *args))
            return
        frame_read = event == "object.__getattr__" and args[1] in FRAME_ATTRIBUTES
        if event in ("exec", "compile") or frame_read or event in FRAME_EVENTS:
            self.auditing = True  # what the hook itself does raises events too
            try:
                caller = sys._getframe(1)
                if event == "exec":
                    problem = self.foreign_code(args[0], caller)
                elif event == "compile":
                    problem = self.compiled(args[0], args[1], caller)
                else:
                    problem = self.asked_by_candidate(str(args[1]) if frame_read else event, caller)
            finally:
                self.auditing = False
        elif event.startswith(REFUSED_EVENTS):
            problem = event
        else:
            return
        if problem is not None:
            self.refused(problem, "tampering")

    def asked_by_candidate(self, what: str, caller: Any) -> str | None:
        """`what`, refused unless the code that asked for it reads the frame for itself: the
        worker, torch (which formats the stack where a lazy call was queued) and the standard
        library's readers of a caller's module name (`FRAME_READERS`). Asked through `inspect`
        or `traceback` (which hand frames on), the asker is their caller; any other library that
        hands frames on (`bdb`, `asyncio`, a debugger) is refused with the candidate's code."""
        if self.summarized(caller):
            return None
        frame = caller
        while frame is not None and frame.f_code.co_filename in self.handlers:
            frame = frame.f_back
        if frame is None or frame.f_code.co_filename.startswith(self.readers):
            return None
        if self.importing_library(frame):
            return None
        return f"{what} (reaches frames, code or the grader's objects)"

    @contextlib.contextmanager
    def watching(self, counter: Any) -> Iterator[None]:
        """While the operation counter counts a call: count as `unseen` each call of the
        candidate's Python code that runs outside the counter's sight (called back from inside
        a torch function, `Tensor.apply_`, while torch has the counter off its mode stack)."""
        roots = (os.path.join(self.root, ""), os.path.join(os.path.realpath(self.root), ""))
        if not isinstance(counter, OpCounter) or not self.root:
            yield
            return
        counted = counter.counted

        def watch(frame: Any, event: str, arg: Any) -> None:
            own = event == "call" and frame.f_code.co_filename.startswith(roots)
            if own and not torch._C._len_torch_function_stack():
                counted["unseen"] += 1

        self.auditing = True  # the hook refuses profile hooks to everyone else
        sys.setprofile(watch)
        self.auditing = False
        try:
            yield
        finally:
            self.auditing = True
            sys.setprofile(None)
            self.auditing = False

    def summarized(self, frame: Any) -> bool:
        """Whether frames are read by `traceback` into text and kept there (`print_exc`,
        `format_exc`, `print_stack`): its frame walk consumed by `StackSummary`, without the
        frames' locals."""
        while frame is not None and frame.f_code.co_filename in self.handlers:
            if frame.f_code.co_name == SUMMARIZER:
                return frame.f_locals.get("capture_locals", True) is False
            frame = frame.f_back
        return False

    def makes_code(self, caller: Any, runs: bool) -> bool:
        """Whether code made from text at `caller` (a frame) is the libraries' own: the
        standard library's classes made from their fields (`CODE_MAKERS`); a library's module
        generating code while it is imported (mpmath does, imported lazily by torch); and,
        compiled but not run, the import system's and `typing`'s (a string annotation becomes a
        ForwardRef). Anything else (the candidate's code, or `timeit`, `doctest`, `pickle`,
        `sympy`, torch's annotation reader asked by it) would run text the host never read."""
        filename = caller.f_code.co_filename
        if filename.startswith("<frozen importlib") or filename == self.typing:
            return not runs
        return filename in self.makers or self.importing_library(caller)

    def importing_library(self, frame: Any) -> bool:
        """Whether `frame` is a library's own work while one of its modules is imported: it and
        every frame up to the nearest module-level one are the libraries' (not the worker's, not
        a module that runs text it is given, not the candidate's code called back): what it
        does then is the library's (mpmath generates code, sympy's dispatch reads its caller)."""
        while frame is not None:
            filename = frame.f_code.co_filename
            library = filename.startswith(self.libraries) or filename.startswith("<frozen")
            if not library or filename.startswith(self.trusted[-1]):
                return False
            if filename.startswith(self.runners):
                return False
            if frame.f_code.co_name == "<module>":
                return True
            frame = frame.f_back
        return False

    def compiled(self, source: Any, filename: Any, caller: Any) -> str | None:
        """Why compiling `source` is refused, if it is: text compiled where only the libraries
        may, or a file's name given to text that is not that file as it is (or as handed in)."""
        name = os.fsdecode(filename) if isinstance(filename, str | bytes) else str(filename)
        if caller.f_code.co_filename == self.ast:
            return None  # `ast.parse`: a tree, not code (compiling a tree is a compile of its own)
        if name.startswith("<"):
            return None if self.makes_code(caller, runs=False) else "compiling text into code"
        text = source.encode() if isinstance(source, str) else source
        if not isinstance(text, bytes) or text != self.file_as_it_is(name):
            return f"compiling code under the name of {name}"
        return None

    def file_as_it_is(self, name: str) -> bytes | None:
        """A library's file as it is, or one of the problem's files as handed in; else None."""
        path = os.path.realpath(name)
        if path.startswith(os.path.join(self.root, "")):
            if path not in self.allowed:
                return None
            expected = self.allowed[path]
            if expected is not None:
                return expected
        elif not path.startswith(self.trusted):
            return None
        try:
            return Path(path).read_bytes()
        except OSError:
            return None

    def foreign_code(self, code: Any, caller: Any) -> str | None:
        """Why running `code` is refused, if it is: a file neither of the libraries nor one of
        the problem's as handed in, or text made into code where only the libraries may."""
        filename = getattr(code, "co_filename", "")
        if filename.startswith("<"):
            if filename.startswith("<frozen") or self.makes_code(caller, runs=True):
                return None
            if caller.f_code.co_filename == self.typing and names_only(code):
                return None  # a string annotation evaluated: `"torch.Tensor"`, no call in it
            return "running code made from text"
        path = os.path.realpath(filename)
        if path.startswith(os.path.join(self.root, "")):
            if path not in self.allowed:
                relative = os.path.relpath(path, self.root)
                return f"running {relative}, which no file of the problem imports"
            expected = self.allowed[path]
            with contextlib.suppress(OSError):
                if expected is None or Path(path).read_bytes() == expected:
                    return None
            return f"running {os.path.relpath(path, self.root)}, which is not as handed in"
        if path.startswith(self.trusted):
            return None
        return f"running code from {filename}, which was not handed in"

    # -- checking that it is in place

    def check(self, full: bool) -> list[PolicyEvent]:
        """What of the guard is no longer in place: its state, torch's neutered Python
        attention, its kernel in front of SDPA; with `full`, that kernel without autograd too
        and every kernel of ours."""
        missing = [
            f"the refusal of {getattr(item.owner, '__qualname__', item.owner)}"
            for item in self.neutered
            if (
                getattr(item.owner, item.attribute, None) if item.attribute else item.owner.__code__
            )
            is not item.refusing
        ]
        state = (self.armed, self.refuse, self.local.depth, self.local.backward)
        if state != (True, self.policy, 0, False):
            missing.append("its state (armed, refused families, depth)")
        if ("aten::scaled_dot_product_attention", "CPU") in self.kernels:
            missing += self.canaries((False, True) if full else (False,))
        if full and hasattr(torch.library, "get_kernel"):
            missing += [
                f"its kernel for {op} on {key}"
                for (op, key), origin in self.kernels.items()
                if repr(torch.library.get_kernel(op, key)) != origin
            ]
        return [{"kind": "tampering", "what": f"the policy guard lost {m}"} for m in missing]

    def canaries(self, modes: tuple[bool, ...]) -> list[str]:
        """Call SDPA, with autograd and (`modes`) without, while our kernels raise `Canary`:
        one that does not raise it is no longer ours."""
        lost: list[str] = []
        self.canary = True
        try:
            for inference in modes:
                try:
                    with torch.inference_mode(inference):
                        tiny = torch.zeros(1, 1, 1, 1)
                        self.sdpa(tiny, tiny, tiny)
                except Canary:
                    continue
                except Exception:  # another kernel's error: not ours
                    pass
                lost.append("its kernel for aten::scaled_dot_product_attention")
        finally:
            self.canary = False
        return lost


LIBRARIES: list[Any] = []
"""The torch library that holds the guard's kernels: its registrations live while it does."""

IMPORT_HOOK = """
def hook(path, finder=None, root=None):
    if path == root or path.startswith(root + "/"):
        return finder(path)
    raise ImportError(path)
"""


def source_only(root: str) -> None:
    """The candidate's modules are compiled from their `.py` files, never from bytecode or
    extension modules found beside them."""
    finder = importlib.machinery.FileFinder.path_hook(
        (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES)
    )
    hook = sealed(IMPORT_HOOK, "hook")
    hook.__defaults__ = (finder, root)
    sys.path_hooks.insert(0, hook)
    for path in list(sys.path_importer_cache):
        if path == root or path.startswith(os.path.join(root, "")):
            del sys.path_importer_cache[path]
    sys.pycache_prefix = NO_BYTECODE


def unlisted() -> None:
    """Take this module out of `sys.modules` (and off its package): the names that lead to it
    (`__main__`, `sandbox.worker`) lead nowhere from the candidate's code. Its functions
    keep their globals."""
    own = globals()
    for name in {__name__, "__main__"}:
        module = sys.modules.get(name)
        if module is None or getattr(module, "__dict__", None) is not own:
            continue
        if name == "__main__":
            sys.modules[name] = types.ModuleType(name)
            continue
        del sys.modules[name]
        package, _, leaf = name.rpartition(".")
        with contextlib.suppress(AttributeError, KeyError):
            delattr(sys.modules[package], leaf)


GUARD = Guard()


PRODUCTS = frozenset({
    "matmul", "__matmul__", "__rmatmul__", "bmm", "mm", "baddbmm", "einsum", "tensordot",
    "scaled_dot_product_attention",
})  # fmt: skip
"""Torch functions that multiply matrices (the products of attention: an SDPA call counts as
its two)."""
SOFTMAXES = frozenset({"softmax", "_softmax", "log_softmax", "exp"})
"""Torch functions that normalize attention's scores: counted where they give a square matrix
(tokens by tokens, more than one), as attention's weights are; an SDPA call counts too."""
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
        weights = result.numel() if name in SOFTMAXES and square(result) else 0
    if weights:
        counted["softmaxes"] += 1
        if weights > counted["largest"]:
            counted["largest"] = weights
    return result

def square(tensor):
    if not isinstance(tensor, Tensor) or tensor.dim() < 2:
        return False
    return tensor.shape[-1] == tensor.shape[-2] and tensor.shape[-1] > 1
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


# ---------------------------------------------------------------------------- probe executor


def seed_cpu(seed: int) -> None:
    """Seed the CPU generator, the only one a probe uses. `torch.manual_seed` also queues the
    seed for CUDA, XPU and MPS, formatting the caller's stack each time: most of a probe's time."""
    torch.default_generator.manual_seed(seed)


def run_probe(
    namespace: Namespace,
    probe: Probe,
    inputs: dict[str, torch.Tensor],
    mode: Mode,
    source_root: str = "",
) -> tuple[ProbeData, dict[str, torch.Tensor]]:
    """Run one probe against `namespace` (a module's globals) and return its result data; in
    the sandbox, error frames are those of files under `source_root`, and the policy guard's
    trace and events are the probe's."""
    result: ProbeData = {
        "id": probe["id"],
        "error": None,
        "inspect": None,
        "load": None,
        "calls": [],
        "policy": [],
    }
    tensors: dict[str, torch.Tensor] = {}
    stage: Stage = "init"
    try:
        target = namespace[probe["symbol"]]
        init = probe.get("init")
        if init is not None:
            seed_cpu(0)
            target = target(**init)
            if not isinstance(target, nn.Module):
                raise TypeError(f"{probe['symbol']}(...) did not return an nn.Module")
            attrs, weights = probe.get("inspect"), probe.get("weights")
            if attrs is not None:
                stage = "inspect"
                result["inspect"] = inspect_module(target, attrs)
            if weights is not None:
                stage = "load"
                result["load"] = load_weights(target, weights, inputs)
            stage = "setup"
            for op in probe.get("setup", []):
                target = apply_setup(target, op)
            target.train(probe.get("mode", "eval") == "train")
        counted = bool(probe.get("count_ops"))
        for index, call in enumerate(probe["calls"]):
            stage = "call"
            result["calls"].append(run_call(target, call, index, inputs, tensors, mode, counted))
    except BaseException as exc:  # candidate code may raise anything
        if isinstance(exc, KeyboardInterrupt | SystemExit) and mode == "host":
            raise
        frames_under = source_root if mode == "sandbox" else None
        result["error"] = describe_error(exc, stage, len(result["calls"]), frames_under)
    return result, tensors


def inspect_module(module: nn.Module, attrs: list[str]) -> InspectInfo:
    """Parameters, buffers, plain tensor attributes, submodules and requested attributes."""
    storages: dict[int, int] = {}

    def storage_of(t: torch.Tensor) -> int:
        key = t.untyped_storage().data_ptr() if t.device.type != "meta" else id(t)
        return storages.setdefault(key, len(storages))

    params: list[ParamInfo] = [
        {
            "name": name,
            "shape": list(p.shape),
            "dtype": str(p.dtype).removeprefix("torch."),
            "requires_grad": bool(p.requires_grad),
            "storage": storage_of(p),
        }
        for name, p in module.named_parameters(remove_duplicate=False)
    ]
    buffers: list[BufferInfo] = []
    for name, b in module.named_buffers(remove_duplicate=False):
        owner_name, _, leaf = name.rpartition(".")
        owner = module.get_submodule(owner_name) if owner_name else module
        buffers.append(
            {
                "name": name,
                "shape": list(b.shape),
                "dtype": str(b.dtype).removeprefix("torch."),
                "persistent": leaf not in owner._non_persistent_buffers_set,
            }
        )
    instances: dict[int, int] = {}
    modules: list[ModuleInfo] = [
        {
            "name": name,
            "type": type(m).__name__,
            "instance": instances.setdefault(id(m), len(instances)),
        }
        for name, m in module.named_modules(remove_duplicate=False)
    ]
    tensor_attrs = [
        f"{name}.{key}".lstrip(".")
        for name, m in module.named_modules()
        for key, value in vars(m).items()
        if isinstance(value, torch.Tensor) and not isinstance(value, nn.Parameter)
    ]
    dropouts = {name: float(m.p) for name, m in module.named_modules() if isinstance(m, nn.Dropout)}
    return {
        "params": params,
        "buffers": buffers,
        "modules": modules,
        "tensor_attrs": tensor_attrs,
        "dropouts": dropouts,
        "attrs": {name: read_attr(module, name) for name in attrs},
    }


def read_attr(obj: Any, dotted: str) -> AttrValue:
    """A JSON-able view of `obj.a.b`: plain values as they are, anything else by type name."""
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return {"missing": True}
        obj = getattr(obj, part)
    if obj is None or isinstance(obj, bool | int | str):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if isinstance(obj, nn.Dropout):
        return {"type": type(obj).__name__, "p": float(obj.p)}
    return {"type": type(obj).__name__}


def load_weights(
    module: nn.Module, names: dict[str, str], inputs: dict[str, torch.Tensor]
) -> LoadInfo:
    """Copy the host's weights into the module's parameters by name."""
    params = dict(module.named_parameters())
    missing: list[str] = []
    mismatched: list[Mismatch] = []
    for name, key in names.items():
        value = inputs[key]
        if name not in params:
            missing.append(name)
        elif params[name].shape != value.shape:
            mismatched.append(
                {"name": name, "expected": list(value.shape), "got": list(params[name].shape)}
            )
        else:
            with torch.no_grad():
                params[name].copy_(value)
    unexpected = sorted(set(params) - set(names))
    return {"missing": missing, "unexpected": unexpected, "mismatched": mismatched}


def apply_setup(module: nn.Module, op: SetupOp) -> nn.Module:
    kind = op["op"]
    if kind == "double":
        return module.double()
    if kind == "set":
        setattr(module, op["name"], op["value"])
        return module
    raise ValueError(f"unknown setup op {kind!r}")


def build_arg(spec: Argument, inputs: dict[str, torch.Tensor]) -> Any:
    """Turn one argument description into the object handed to candidate code."""
    if "value" in spec:
        return spec["value"]
    if "stub" in spec:
        return build_stub(spec["stub"], inputs)
    tensor = inputs[spec["tensor"]].clone()
    if spec.get("layout") == "noncontiguous":
        tensor = tensor.transpose(0, -1).contiguous().transpose(0, -1)
    if spec.get("grad"):
        tensor.requires_grad_(True)
    return tensor


def build_stub(spec: Stub, inputs: dict[str, torch.Tensor]) -> nn.Module:
    """A module exposing the grader's layers and attributes whose forward refuses to run."""
    stub: nn.Module = StubModule()
    for layer, names in spec["linears"].items():
        weight = inputs[names["weight"]]
        linear = nn.Linear(weight.shape[1], weight.shape[0], bias="bias" in names)
        with torch.no_grad():
            linear.weight.copy_(weight)
            if "bias" in names:
                linear.bias.copy_(inputs[names["bias"]])
        setattr(stub, layer, linear)
    for name, value in spec.get("attrs", {}).items():
        setattr(stub, name, value)
    if spec.get("dtype") == "float64":
        stub.double()
    return stub.eval()


def run_call(
    target: Any,
    call: Call,
    index: int,
    inputs: dict[str, torch.Tensor],
    tensors: dict[str, torch.Tensor],
    mode: Mode,
    counted: bool,
) -> CallResult:
    """Call the target once (counting the torch functions it runs if `counted`), optionally
    backpropagate, and describe what came back with the calls the guard traced."""
    args = [build_arg(a, inputs) for a in call["args"]]
    kwargs = {k: build_arg(v, inputs) for k, v in call["kwargs"].items()}
    seed = call.get("seed")
    if seed is not None:
        seed_cpu(int(seed))
    GUARD.trace.clear()
    counter = OpCounter() if counted else contextlib.nullcontext()
    start = time.perf_counter()
    with counter, GUARD.watching(counter):
        returned = target(*args, **kwargs)
    seconds = time.perf_counter() - start
    unpacked = isinstance(returned, tuple | list)
    outputs = list(returned) if unpacked else [returned]
    described = [
        describe_output(o, f"c{index}/out{i}", tensors) for i, o in enumerate(outputs[:MAX_OUTPUTS])
    ]
    grads: dict[str, str | None] = {}
    backward = call.get("backward")
    if backward is not None:
        pairs = [
            (out, inputs[key])
            for out, key in zip(outputs, backward, strict=False)
            if key is not None and isinstance(out, torch.Tensor)
        ]
        for out, grad in pairs:
            if out.shape != grad.shape:
                raise ValueError(f"output shape {tuple(out.shape)}, expected {tuple(grad.shape)}")
        # the gradient of sum(out * g) is backward(out, g), without the first-call cost (a
        # sympy import) of passing explicit gradients to torch.autograd.backward
        loss = sum((out * grad.to(out.dtype)).sum() for out, grad in pairs)
        if isinstance(loss, torch.Tensor):
            GUARD.local.backward = True
            try:
                loss.backward()
            finally:
                GUARD.local.backward = False
        for j, arg in enumerate(args):
            if isinstance(arg, torch.Tensor) and arg.requires_grad:
                grads[f"arg{j}"] = save_tensor(arg.grad, f"c{index}/grad/arg{j}", tensors)
        if isinstance(target, nn.Module):
            for name, p in target.named_parameters():
                grads[f"param:{name}"] = save_tensor(p.grad, f"c{index}/grad/p/{name}", tensors)
    return {
        "outputs": described,
        "container": type(returned).__name__[:100] if unpacked else None,
        "length": len(outputs),
        "grads": grads,
        "trace": list(GUARD.trace) if mode == "sandbox" else [],
        "ops": counter.counted if isinstance(counter, OpCounter) else None,
        "seconds": seconds,
    }


def save_tensor(t: torch.Tensor | None, key: str, tensors: dict[str, torch.Tensor]) -> str | None:
    """Keep a copy of `t` under `key`; None for what safetensors cannot store (the host is told
    the shape and dtype only)."""
    if t is None or t.device.type == "meta" or t.layout != torch.strided:
        return None
    if t.is_complex() or t.is_quantized or t.is_nested:
        return None
    tensors[key] = t.detach().cpu().contiguous().clone()
    return key


def describe_output(out: Any, key: str, tensors: dict[str, torch.Tensor]) -> TensorOut | ValueOut:
    if isinstance(out, torch.Tensor):
        return {
            "kind": "tensor",
            "key": save_tensor(out, key, tensors),
            "shape": list(out.shape),
            "dtype": str(out.dtype).removeprefix("torch."),
            "device": out.device.type,
            "contiguous": bool(out.is_contiguous()),
            "requires_grad": bool(out.requires_grad),
        }
    return {"kind": "value", "type": type(out).__name__[:100], "repr": reprlib.repr(out)[:200]}


def describe_error(
    exc: BaseException, stage: Stage, call: int, source_root: str | None
) -> ErrorInfo:
    """The exception, and the frames of it that stand in the candidate's own files (none when
    `source_root` is None)."""
    frames: list[Frame] = []
    for frame in traceback.extract_tb(exc.__traceback__):
        if source_root is not None and frame.filename.startswith(source_root):
            frames.append(
                {
                    "file": os.path.relpath(frame.filename, source_root),
                    "line": frame.lineno,
                    "code": (frame.line or "")[:300],
                }
            )
    return {
        "stage": stage,
        "call": call,
        "type": type(exc).__name__,
        "message": str(exc)[:MAX_MESSAGE],
        "frames": frames[-MAX_FRAMES:],
    }


# ---------------------------------------------------------------------------- the job


class Part(NamedTuple):
    """One problem of the job: its id, its timeout, the memory file holding its part, and the
    submission's files it may run."""

    id: str
    timeout: float
    fd: int
    scope: list[str]


def read_job(fd: int) -> list[Part]:
    """Read the job stream from the pipe `fd` (see `grader/sandboxing/protocol.py`): the index into
    memory, each problem's part into its own memory file, never through this process's memory."""
    (size,) = struct.unpack("<Q", read_exact(fd, 8))
    if size > MAX_INDEX_BYTES:
        raise ValueError(f"job index of {size} bytes")
    index: JobIndex = json.loads(read_exact(fd, size))
    if index.get("version") != PROTOCOL_VERSION:
        raise ValueError(f"job of protocol {index.get('version')}, worker {PROTOCOL_VERSION}")
    return [
        Part(
            p["id"],
            float(p["timeout"]),
            splice_to_memory(fd, int(p["size"]), p["id"]),
            [str(name) for name in p["scope"]],
        )
        for p in index["problems"]
    ]


def read_exact(fd: int, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            raise EOFError("the job stream ended early")
        data += chunk
    return data


def splice_to_memory(fd: int, size: int, name: str) -> int:
    """A new memory file holding the next `size` bytes of the pipe `fd`."""
    memory = os.memfd_create(name, os.MFD_CLOEXEC)
    left = size
    while left:
        moved = os.splice(fd, memory, left)
        if not moved:
            raise EOFError("the job stream ended early")
        left -= moved
    return memory


def load_part(fd: int) -> tuple[ProblemJob, dict[str, torch.Tensor]]:
    """A problem's probes and the tensors they name, from its memory file."""
    data = os.pread(fd, os.fstat(fd).st_size, 0)
    (size,) = struct.unpack_from("<Q", data)
    problem: ProblemJob = json.loads(data[8 : 8 + size])
    return problem, load_tensors(data[8 + size :])


# ---------------------------------------------------------------------------- worker process


def run_problem(
    parts: list[Part], submission: str, files: Files | None, out: Path, inherited: tuple[int, ...]
) -> None:
    """Child process: import the candidate's entry file and run every probe of one problem,
    the first of `parts` (the parts still open: this one and those of later problems), once
    the worker's own descriptors (`inherited`: the result stream, the host's) are closed and
    the policy guard is armed (`files`: the submission as handed in, None if read-only)."""
    part = parts[0]
    problem, inputs = load_part(part.fd)
    seal = sealer(bytes.fromhex(problem["key"]), part.id)
    problem["key"] = ""
    for fd in (*inherited, *(p.fd for p in parts)):
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    folder = out / part.id
    for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
        target = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    reset_inherited(BASELINE)
    deny_exec()
    os.chdir(submission)
    own = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) != own] + [submission]
    sys.dont_write_bytecode = True
    root = os.path.realpath(submission)
    allowed: dict[str, bytes | None] = {os.path.join(root, n): None for n in part.scope}
    if files is not None:  # a folder the candidate's code can write: as handed in, byte for byte
        handed_in = {str(name): data for name, data in files.items()}
        allowed = {os.path.join(root, n): handed_in[n] for n in part.scope if n in handed_in}
    GUARD.arm(problem["refuse"], root, allowed)
    status: ImportStatus = {"import_error": None, "policy": []}
    try:
        module = importlib.import_module(Path(problem["entry"]).stem)
    except BaseException as exc:  # candidate code may raise anything
        status["import_error"] = describe_error(exc, "import", 0, submission)
    status["policy"] = GUARD.take_events() + GUARD.check(full=False)
    encoded = json.dumps(status).encode()
    write_bytes(folder / "import.json", seal("import", encoded).hex().encode() + b"\n" + encoded)
    if status["import_error"] is not None:
        exit_child(0)
    namespace = vars(module)
    probes = problem["probes"]
    for index, probe in enumerate(probes):
        result, tensors = run_probe(namespace, probe, inputs, "sandbox", submission)
        result["policy"] = GUARD.take_events() + GUARD.check(full=index == len(probes) - 1)
        append_record(folder / RESULTS_FILE, result, tensors, seal, index)
    exit_child(0)


Seal = Callable[[str, bytes], bytes]
"""A problem's sealer: the HMAC-SHA256, under the job's key, of a labelled record."""
SEAL_BYTES = 32


def sealer(key: bytes, problem: str) -> Seal:
    """The seal of `problem`'s records: only a holder of the key (the worker's code, the host)
    makes one, so a record the candidate's code wrote or rewrote is known for what it is."""

    def seal(label: str, data: bytes) -> bytes:
        return hmac.new(key, f"{problem}/{label}\0".encode() + data, hashlib.sha256).digest()

    return seal


def append_record(
    path: Path, result: ProbeData, tensors: dict[str, torch.Tensor], seal: Seal, index: int
) -> None:
    """Append one probe's record, in one write: its JSON and its tensors, each after its u64
    length, then its seal (labelled with its index). A record cut short (the child killed while
    writing it) is the file's last."""
    body, blob = json.dumps(result).encode(), encode_tensors(tensors)
    record = b"".join((RECORD_LENGTH.pack(len(body)), body, RECORD_LENGTH.pack(len(blob)), blob))
    record += seal(str(index), record)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        while record:
            record = record[os.write(fd, record) :]
    finally:
        os.close(fd)


def exit_child(code: int) -> None:
    """Flush what the candidate printed, then leave without running any candidate cleanup."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def encode_tensors(tensors: dict[str, torch.Tensor]) -> bytes:
    """The safetensors file of dense, contiguous CPU tensors (`save_tensor`'s copies), read in
    place: `safetensors.torch.save` goes through numpy, ten times slower for small tensors."""
    specs = {
        key: TensorSpec(
            dtype=str(t.dtype).removeprefix("torch."),
            shape=list(t.shape),
            data_ptr=t.data_ptr(),
            data_len=t.numel() * t.element_size(),
        )
        for key, t in tensors.items()
    }
    return bytes(serialize(specs, metadata=None))


def write_json(path: Path, data: Json) -> None:
    write_bytes(path, json.dumps(data).encode())


def write_bytes(path: Path, data: bytes) -> None:
    """Write a file whole (through a `.partial` beside it), whatever a candidate's process left
    at either name (a FIFO, a folder, a link): it is removed first, never opened."""
    partial = path.with_suffix(".partial")
    for stale in (partial, path):
        remove(stale)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)
    partial.replace(path)


def reclaim(folder: Path) -> None:
    """Make a problem's folder the worker's to write again, whatever its child did to it (a
    mode, a link or a file in its place)."""
    try:
        is_folder = stat.S_ISDIR(os.lstat(folder).st_mode)
    except FileNotFoundError:
        is_folder = False
    if is_folder:
        folder.chmod(0o700)
    else:
        fresh_folder(folder)


def fresh_folder(path: Path) -> None:
    """An empty directory at `path`, whatever an earlier problem left there."""
    remove(path)
    path.mkdir()


Files = dict[Path, bytes]
"""A submission's files by their path in its folder."""


def snapshot(root: Path) -> Files:
    """The files under `root` as they are now (links left out)."""
    return {
        path.relative_to(root): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def restore(root: Path, files: Files) -> None:
    """Make `root` hold exactly `files`, whatever an earlier problem of the submission did to
    it (rewrote, added, removed or locked a file, replaced the folder by a link): each problem
    runs on the files handed in, as in a container whose submission is mounted read-only."""
    remove(root)
    root.mkdir(mode=0o755)
    for relative, data in files.items():
        target = root / relative
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o644)


def wait_child(pid: int, timeout: float) -> tuple[int | None, int | None, bool]:
    """Wait for a child up to `timeout` seconds: (exit code, signal, timed out)."""
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(pidfd)
    if not ready:
        return None, signal.SIGKILL, True
    return (*exit_of(status), False)


def exit_of(status: int | None) -> tuple[int | None, int | None]:
    """A wait status as (exit code, signal); neither when the child was not reaped."""
    if status is None:
        return None, None
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    return os.WEXITSTATUS(status), None


def process_tree() -> dict[int, tuple[int, bool]]:
    """Every process below this one: pid -> (parent pid, still running), read from /proc."""
    children: dict[int, list[tuple[int, bool]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                ppid, running = parent_and_state(int(entry))
                children.setdefault(ppid, []).append((int(entry), running))
    below: dict[int, tuple[int, bool]] = {}
    todo = [os.getpid()]
    while todo:
        parent = todo.pop()
        for pid, running in children.get(parent, []):
            below[pid] = (parent, running)
            todo.append(pid)
    return below


def parent_and_state(pid: int) -> tuple[int, bool]:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return int(fields[1]), fields[0] != b"Z"


def end_descendants() -> int:
    """SIGKILL and reap every process left below the worker, however it detached: orphans are
    this process's children (it is PID 1 or a child subreaper), so none is left when it has no
    child. Signals go through pidfds, to processes whose parent is still in the tree, so that a
    recycled pid is never hit. Returns how many were still running."""
    running: set[int] = set()
    while True:
        tree = process_tree()
        ours = tree.keys() | {os.getpid()}
        for pid, (_, alive) in tree.items():
            with contextlib.suppress(OSError):
                pidfd = os.pidfd_open(pid)
                try:
                    if parent_and_state(pid)[0] in ours:
                        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                finally:
                    os.close(pidfd)
            if alive:
                running.add(pid)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return len(running)
        time.sleep(0.001)


class SockFilter(ctypes.Structure):
    """A classic BPF instruction (`struct sock_filter`)."""

    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint),
    ]


class SockFprog(ctypes.Structure):
    """A BPF program (`struct sock_fprog`)."""

    _fields_ = [
        ("len", ctypes.c_ushort),
        ("filter", ctypes.POINTER(SockFilter)),
    ]


def deny_exec() -> bool:
    """Make this process and its descendants unable to run another program (`execve`,
    `execveat`) or start a thread (`clone` of a thread; `clone3`, which the C library then
    replaces with `clone`), with a seccomp filter the kernel enforces and nothing in the process
    can remove: a program started afresh would run without the policy guard, a thread unseen
    by the operation counter. Forking still works. False where this machine's system call
    numbers are not known here."""
    numbers = SYSCALLS.get(platform.machine())
    if numbers is None:
        return False
    arch, execve, execveat, clone, clone3 = numbers
    denied, absent = SECCOMP_RET_ERRNO | errno.EPERM, SECCOMP_RET_ERRNO | errno.ENOSYS
    program = [
        (BPF_LD_W_ABS, 0, 0, 4),  # 0: seccomp_data.arch
        (BPF_JEQ_K, 0, 11, arch),  # 1: another ABI (x86's 32-bit one): 13
        (BPF_LD_W_ABS, 0, 0, 0),  # 2: seccomp_data.nr
        (BPF_JEQ_K, 9, 0, execve),  # 3: 13
        (BPF_JEQ_K, 8, 0, execveat),  # 4: 13
        (BPF_JEQ_K, 6, 0, clone3),  # 5: 12
        (BPF_JEQ_K, 2, 0, clone),  # 6: 9
        (BPF_JGE_K, 5, 0, X32_SYSCALL_BIT),  # 7: x32's numbers, on x86-64: 13
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),  # 8
        (BPF_LD_W_ABS, 0, 0, 16),  # 9: the low half of clone's flags
        (BPF_JSET_K, 2, 0, CLONE_THREAD),  # 10: 13
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),  # 11
        (BPF_RET_K, 0, 0, absent),  # 12
        (BPF_RET_K, 0, 0, denied),  # 13
    ]
    filters = (SockFilter * len(program))(*(SockFilter(*line) for line in program))
    fprog = SockFprog(len(program), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
    return True


def protect_worker() -> None:
    """Make this process undumpable, so that no child can open its /proc files (its memory, the
    result pipe among its descriptors) or ptrace it, and the reaper of every orphan below it."""
    libc = ctypes.CDLL(None, use_errno=True)
    for option, value in ((PR_SET_DUMPABLE, 0), (PR_SET_CHILD_SUBREAPER, 1)):
        if libc.prctl(option, value, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl({option}, {value}) failed")


class PipeWriter:
    """A pipe that counts what it wrote: tarfile's "w" mode asks where it is, never seeks."""

    def __init__(self, fd: int) -> None:
        self.file = os.fdopen(fd, "wb")
        self.position = 0

    def write(self, data: bytes) -> int:
        self.file.write(data)
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        self.file.close()


class FrameWriter:
    """The result stream as D frames on the host's channel (a warm worker's), each of at most
    MAX_FRAME bytes; closing it sends what is left and leaves the channel open."""

    def __init__(self, channel: int) -> None:
        self.channel = channel
        self.buffer = bytearray()
        self.position = 0

    def write(self, data: bytes) -> int:
        self.buffer += data
        self.position += len(data)
        while len(self.buffer) >= MAX_FRAME:
            send_frame(self.channel, b"D", bytes(self.buffer[:MAX_FRAME]))
            del self.buffer[:MAX_FRAME]
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        if self.buffer:
            send_frame(self.channel, b"D", bytes(self.buffer))
            self.buffer.clear()

    def close(self) -> None:
        self.flush()


RESULT_FILES = ("stdout.txt", "stderr.txt", "import.json", RESULTS_FILE, "exit.json")
"""The files of a problem's folder that the worker sends, besides its `started` marker."""


class Emitter:
    """Streams result files to the host as one uncompressed ustar archive on `sink`, each as
    soon as it is final, so that what finished before a crash still arrives. Without a sink it
    leaves the files where they are."""

    def __init__(self, out: Path, sink: PipeWriter | FrameWriter | None) -> None:
        self.out = out
        self.file = sink
        # "w", not "w|": the stream mode keeps a partial block back until it is closed
        pipe = cast(IO[bytes], sink)
        self.tar = (
            tarfile.open(fileobj=pipe, mode="w", format=tarfile.USTAR_FORMAT)  # noqa: SIM115
            if sink is not None
            else None
        )

    def send(self, *paths: Path) -> None:
        if self.tar is None or self.file is None:
            return
        for path in paths:
            if path.is_file() and not path.is_symlink():
                self.tar.add(path, arcname=str(path.relative_to(self.out)), recursive=False)
        self.file.flush()

    def send_results(self, folder: Path) -> None:
        """A finished problem's files, only the names the worker itself writes, `exit.json` last
        (a problem whose exit arrived is complete); then, when streaming, delete the folder."""
        found = [p for p in folder.iterdir() if p.name in RESULT_FILES]
        self.send(*sorted(found, key=lambda p: (p.name == "exit.json", p.name)))
        if self.tar is not None:
            remove(folder)

    def close(self) -> None:
        if self.tar is not None:
            self.tar.close()
        if self.file is not None:
            self.file.close()


# ---------------------------------------------------------------------------- warm serving


SCRATCH_ROOTS = (Path("/tmp"), Path("/dev/shm"))
"""Where a submission can write besides the output folder: emptied after each one."""
SUBMISSION_DIR = Path("/tmp/submission")
MAX_CLEANUP_ENTRIES = 100_000
MAX_CLEANUP_DEPTH = 200
"""What the worker clears after a submission at most: beyond, its container is replaced."""
FRAME = struct.Struct("<cI")
MAX_FRAME = 1 << 16
OOM_COUNTERS = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")


def send_frame(fd: int, kind: bytes, payload: bytes) -> None:
    """One frame to the host: a kind byte (R ready, D result stream, E end), a u32 length."""
    data = FRAME.pack(kind, len(payload)) + payload
    while data:
        data = data[os.write(fd, data) :]


def read_submission(fd: int) -> tuple[SubmissionHeader, Files] | None:
    """The next submission's header (u64 size, then `SubmissionHeader` JSON) and its files,
    kept in memory (`restore` writes them before each problem); None at the end of the stream."""
    first = os.read(fd, 8)
    if not first:
        return None
    (size,) = struct.unpack("<Q", first + read_exact(fd, 8 - len(first)))
    if size > MAX_INDEX_BYTES:
        raise ValueError(f"submission header of {size} bytes")
    header: SubmissionHeader = json.loads(read_exact(fd, size))
    if header["version"] != PROTOCOL_VERSION:
        raise ValueError(f"submission of protocol {header['version']}, worker {PROTOCOL_VERSION}")
    files: Files = {}
    for entry in header["files"]:
        relative = Path(entry["name"])
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise ValueError(f"unsafe file name {entry['name']!r}")
        files[relative] = read_exact(fd, int(entry["size"]))
    return header, files


def oom_kills() -> int | None:
    """How many processes the container's memory cgroup has killed so far, if it says."""
    for path in OOM_COUNTERS:
        with contextlib.suppress(OSError):
            for line in Path(path).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    return None


State = dict[str, Json]


def io_priority(value: int | None = None) -> int | None:
    """This process's I/O priority (`ioprio_get`), or set it to `value` (`ioprio_set`); None
    where this machine's system call numbers are not known here."""
    numbers = IOPRIO_SYSCALLS.get(platform.machine())
    if numbers is None:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    if value is not None:
        libc.syscall(numbers[0], IOPRIO_WHO_PROCESS, 0, value)
        return value
    found = int(libc.syscall(numbers[1], IOPRIO_WHO_PROCESS, 0))
    return None if found < 0 else found


def own_state() -> State:
    """What another process of this uid could change about this one, and children inherit:
    its rlimits (prlimit), niceness, I/O priority, CPU affinity and scheduling; and its umask."""
    limits = {
        name: list(resource.getrlimit(getattr(resource, name)))
        for name in dir(resource)
        if name.startswith("RLIMIT_")
    }
    umask = os.umask(0o022)
    os.umask(umask)
    return {
        "rlimits": limits,
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "ioprio": io_priority(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "scheduler": os.sched_getscheduler(0),
        "priority": os.sched_getparam(0).sched_priority,
        "umask": umask,
    }


BASELINE: State = {}
"""The worker's own state as it started, before any candidate code ran (`main` sets it)."""


def reset_inherited(baseline: State) -> None:
    """Set what this process inherited from the worker back to the worker's state at its start,
    wherever the kernel lets it: a process of the same uid may have changed the worker's own
    (the worker's check after each submission then retires its container)."""
    if not baseline:
        return
    os.umask(baseline["umask"])
    for name, (soft, hard) in baseline["rlimits"].items():
        with contextlib.suppress(ValueError, OSError):  # a lowered hard limit stays lowered
            resource.setrlimit(getattr(resource, name), (soft, hard))
    with contextlib.suppress(OSError):  # a raised niceness cannot be lowered without privilege
        os.setpriority(os.PRIO_PROCESS, 0, baseline["nice"])
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, baseline["affinity"])
    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, baseline["scheduler"], os.sched_param(baseline["priority"]))
    if baseline["ioprio"] is not None:
        io_priority(baseline["ioprio"])


def kill_all_others() -> dict[int, int]:
    """SIGKILL every other process of the container and reap them all: as PID 1 every orphan
    is this process's child, so none is left once it has no child. Returns pid -> wait status."""
    statuses: dict[int, int] = {}
    while True:
        with contextlib.suppress(ProcessLookupError):  # no process left to signal
            os.kill(-1, signal.SIGKILL)
        try:
            while (reaped := os.waitpid(-1, os.WNOHANG))[0]:
                statuses[reaped[0]] = reaped[1]
        except ChildProcessError:
            return statuses
        time.sleep(0.001)


class LeftBehind(OSError):
    """More than the worker clears up after a submission: its container is replaced."""


def remove(path: Path) -> None:
    """Remove whatever is at `path` (a file, a link, a FIFO, a folder of any modes), if
    anything is."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        os.chmod(path, 0o700)
        empty(path)
        os.rmdir(path)
    else:
        os.unlink(path)


def empty(folder: Path, budget: int | None = None) -> None:
    """Delete everything inside `folder`, whatever modes a submission gave its entries, without
    recursion and by directory descriptors: a deep tree costs what its size costs, not its
    depth squared. With a `budget`, `LeftBehind` past that many entries or
    `MAX_CLEANUP_DEPTH` levels (the worker's own time is bounded, and its container replaced)."""
    top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    stack: list[tuple[int, str, list[str]]] = [(top, "", os.listdir(top))]
    seen = 0
    try:
        while stack:
            fd, name, names = stack[-1]
            if not names:
                stack.pop()
                os.close(fd)
                if stack:
                    os.rmdir(name, dir_fd=stack[-1][0])
                continue
            entry = names.pop()
            seen += 1
            if budget is not None and (seen > budget or len(stack) > MAX_CLEANUP_DEPTH):
                raise LeftBehind(f"more than {budget} entries or {MAX_CLEANUP_DEPTH} levels")
            if stat.S_ISDIR(os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode):
                os.chmod(entry, 0o700, dir_fd=fd)
                child = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                stack.append((child, entry, os.listdir(child)))
            else:
                os.unlink(entry, dir_fd=fd)
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def cpu_spent() -> str | None:
    """Whether this worker has used half of its CPU limit (RLIMIT_CPU, which would SIGKILL it
    during some later submission): what it used, if so."""
    limit = resource.getrlimit(resource.RLIMIT_CPU)[0]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    if limit == resource.RLIM_INFINITY or used < limit / 2:
        return None
    return f"the worker used {used:.0f} s of its {limit} s of CPU"


def remove_ipc() -> int:
    """Remove every System V shared memory segment, semaphore set and message queue."""
    libc = ctypes.CDLL(None, use_errno=True)
    removed = 0
    for kind, remove in (("shm", libc.shmctl), ("sem", libc.semctl), ("msg", libc.msgctl)):
        with open(f"/proc/sysvipc/{kind}") as table:
            for line in table.readlines()[1:]:
                ipc_id = int(line.split()[1])
                args = (ipc_id, 0, 0, None) if kind == "sem" else (ipc_id, 0, None)  # IPC_RMID
                if remove(*args) == 0:
                    removed += 1
    return removed


def leftovers(out: Path) -> list[str]:
    """Whatever of a submission is still here after the clean-up: none, or the container goes."""
    found = [f"process {pid}" for pid in os.listdir("/proc") if pid.isdigit() and pid != "1"]
    found += [f"{root}/{name}" for root in (*SCRATCH_ROOTS, out) for name in os.listdir(root)]
    for kind in ("shm", "sem", "msg"):
        with open(f"/proc/sysvipc/{kind}") as table:
            found += [f"sysv {kind} {line.split()[1]}" for line in table.readlines()[1:]]
    return found


def serve_one(
    header: SubmissionHeader,
    files: Files,
    parts: list[Part],
    from_host: int,
    channel: int,
    out: Path,
) -> bool:
    """Grade one submission, each problem in a child of this process, as PID 1 (a signal from
    a child to this process, its parent, is dropped by the kernel; `kill(-1)` reaches no one
    else), then clean up; False when this container must not serve another (a grader fault,
    a submission over its wall clock, an OOM kill, anything left behind)."""
    state, ooms = own_state(), oom_kills()
    start = time.monotonic()
    code = 0
    try:
        inherited = (from_host, channel)
        sink = FrameWriter(channel)
        run_submission(parts, str(SUBMISSION_DIR), files, out, inherited, sink, scratch=True)
    except Exception:  # the grader's own fault: this container serves no other
        traceback.print_exc()
        code = 70
    finally:
        for part in parts:
            with contextlib.suppress(OSError):  # those of the problems not run
                os.close(part.fd)
    kill_all_others()
    timed_out = time.monotonic() - start > float(header["wall"])
    removed = remove_ipc()
    out.chmod(0o700)
    left: list[str] = []
    for root in (*SCRATCH_ROOTS, out):
        try:
            empty(root, MAX_CLEANUP_ENTRIES)
        except OSError as exc:  # too much to clear, or a mode it cannot undo
            left.append(f"{root}: {exc}")
    left += leftovers(out)
    spent = cpu_spent()
    left += [spent] if spent is not None else []
    changed = own_state() != state
    oom = None if ooms is None else (oom_kills() or 0) - ooms
    clean = code == 0 and not timed_out and not oom and not left and not changed
    ended: SubmissionEnd = {
        "exit_code": code,
        "signal": None,
        "timed_out": timed_out,
        "seconds": round(time.monotonic() - start, 4),
        "oom_kills": oom,
        "ipc_removed": removed,
        "leftovers": left[:20],
        "state_changed": changed,
        "retire": not clean,
    }
    send_frame(channel, b"E", json.dumps(ended).encode())
    return clean


def warm_up() -> None:
    """Run once, in the server, what every problem's child would otherwise pay for the first
    time after its fork (lazy imports, kernels' first dispatch): attention, masks, linear
    layers, backward, safetensors. Then freeze the heap, so the children's garbage collector
    leaves the shared pages alone, and back it with huge pages. Only this file's code and the
    libraries run here."""
    x = torch.randn(2, 5, 16, requires_grad=True)
    attention = nn.MultiheadAttention(16, 2, batch_first=True)
    out, _ = attention(x, x, x)
    q = nn.Linear(16, 48)(x).view(2, 5, 6, 8).transpose(1, 2)
    mask = torch.tril(torch.ones(5, 5)) == 0
    scores = (q @ q.transpose(-2, -1) / math.sqrt(8)).masked_fill(mask, float("-inf"))
    context = nn.Dropout(0.1)(torch.softmax(scores, dim=-1)) @ q
    sdpa = nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    (out.sum() + context.sum() + sdpa.sum()).backward()
    load_tensors(encode_tensors({"out": out.detach().double().contiguous()}))
    GUARD.install()
    if len(os.listdir("/proc/self/task")) != 1:
        raise RuntimeError("warming up started a thread: forking would not be safe")
    gc.freeze()
    collapse_heap()


def collapse_heap() -> int:
    """Back this process's private writable memory (torch's and Python's heap) with huge pages
    where the kernel can (`MADV_COLLAPSE`, Linux 6.1): a fork then copies, and an exit frees, a
    page table entry per 2 MiB rather than per 4 KiB (a fifth of a problem's child's time on a
    2-core VM). Returns the bytes collapsed; 0 where the kernel cannot, which changes nothing
    else."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    collapsed = 0
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if fields[1] != "rw-p" or fields[5:] not in ([], ["[heap]"]):
                continue
            low, high = (int(bound, 16) for bound in fields[0].split("-"))
            start, end = -(-low // HUGE_PAGE) * HUGE_PAGE, high // HUGE_PAGE * HUGE_PAGE
            if end > start and libc.madvise(start, end - start, MADV_COLLAPSE) == 0:
                collapsed += end - start
    return collapsed


def serve(from_host: int, channel: int, out: Path, count: int) -> int:
    """Grade up to `count` submissions read from `from_host`, one after another, each in a
    process forked from this one (torch already imported), which never returns here."""
    if os.getpid() != 1:
        raise SystemExit("--serve runs only as PID 1 of a container: it kills every other process")
    warm_up()
    send_frame(channel, b"R", json.dumps(worker_report()).encode())
    for _ in range(count):
        submission = read_submission(from_host)
        if submission is None:
            return 0
        header, files = submission
        if not serve_one(header, files, read_job(from_host), from_host, channel, out):
            return 0
    return 0


def worker_report() -> WorkerReport:
    """What this worker is: its protocol version and the torch and Python it runs."""
    return {
        "version": PROTOCOL_VERSION,
        "torch": torch.__version__,
        "python": sys.version.split()[0],
    }


def run_submission(
    parts: list[Part],
    submission: str,
    files: Files | None,
    out: Path,
    inherited: tuple[int, ...],
    sink: PipeWriter | FrameWriter | None,
    scratch: bool = False,
) -> None:
    """Run each problem of the job in a child of its own (which first closes the `inherited`
    descriptors), one after another, on the submission's `files` written anew (None: its
    folder is read-only) in an emptied /tmp and /dev/shm with `scratch` (a warm container's),
    and send each problem's files on `sink` as soon as its processes are gone, or leave them
    without one."""
    emitter = Emitter(out, sink)
    write_json(out / "worker.json", worker_report())
    emitter.send(out / "worker.json")
    for index, part in enumerate(parts):
        if scratch:
            for root in SCRATCH_ROOTS:  # what an earlier problem left (and the submission's copy)
                with contextlib.suppress(OSError):  # left for the clean-up after the submission
                    empty(root, MAX_CLEANUP_ENTRIES)
        if files is not None:
            restore(Path(submission), files)
        folder = out / part.id
        fresh_folder(folder)
        (folder / "started").touch()
        emitter.send(folder / "started")  # from here on, candidate code may have run
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                run_problem(parts[index:], submission, files, out, inherited)
            finally:
                os._exit(70)
        code, sig, timed_out = wait_child(pid, part.timeout)
        strays = end_descendants()
        ended: ProblemExit = {
            "exit_code": code,
            "signal": sig,
            "timed_out": timed_out,
            "seconds": round(time.monotonic() - start, 4),
            "stray_processes": strays,
        }
        reclaim(folder)
        write_json(folder / "exit.json", ended)
        emitter.send_results(folder)
        os.close(part.fd)
    emitter.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submission")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--emit-tar", action="store_true")
    parser.add_argument(
        "--clean-scratch", action="store_true", help="empty /tmp and /dev/shm before each problem"
    )
    parser.add_argument("--serve", type=int, metavar="K", help="serve up to K submissions")
    args = parser.parse_args(argv)

    BASELINE.update(own_state())
    data_fd = os.dup(1)
    os.dup2(2, 1)
    protect_worker()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as PID 1, a child could otherwise send it
    torch.set_num_threads(1)
    if args.serve is not None:
        from_host = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        return serve(from_host, data_fd, args.out, args.serve)
    if args.submission is None:
        parser.error("--submission is required without --serve")
    parts = read_job(0)
    if os.read(0, 1):
        raise ValueError("the job stream is longer than its index says")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sink = PipeWriter(data_fd) if args.emit_tar else None
    submission = Path(os.path.realpath(args.submission))
    files = snapshot(submission) if os.access(submission, os.W_OK) else None
    GUARD.install()
    run_submission(parts, str(submission), files, args.out, (data_fd,), sink, args.clean_scratch)
    if sink is None:
        os.close(data_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
