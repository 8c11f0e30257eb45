"""The sandbox worker: runs a candidate's code on the probes the host asked for, writes data back.

Usage: python3 worker.py --submission SUB_DIR --out OUT_DIR [--emit-tar] < JOB
       python3 worker.py --out OUT_DIR --serve K < SUBMISSIONS   (PID 1 of a container only)

The job arrives on stdin, a pipe: an index (each problem's id, timeout and size), then each
problem's part (its probes as JSON, the tensors they name as safetensors). The worker imports
torch once, splices each part into a memory file of its own without reading it, then forks one
child per problem. A child loads its own part, closes every other one, imports the candidate's
entry file, runs that problem's probes and appends, per probe, a record to
`OUT_DIR/<problem>/results.bin` (its JSON and its tensors as safetensors, each after its u64
length); its stdout and stderr go to files beside it. The parent writes
`OUT_DIR/worker.json` (versions) first, a `started` marker before each child, and, once every
process the problem started has been killed and reaped, how it ended in `exit.json`.

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
/dev/shm and OUT_DIR,
removes System V IPC objects and checks that nothing is left and that its own limits are
unchanged; it stops (and the host replaces its container) after anything but a clean run.

Nothing here judges anything: the host compares the data with its own reference run. This file
must stay self-contained (stdlib, torch, safetensors): it is the only grader code in the image,
and the host imports it too, to run the reference through the very same probe executor. It
defines every record of the protocol, both ways, once (see "the protocol" below).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import importlib
import json
import math
import os
import reprlib
import resource
import select
import shutil
import signal
import struct
import sys
import tarfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple, TypedDict, cast, final

import torch
from safetensors import TensorSpec, serialize
from safetensors.torch import load as load_tensors
from torch import nn

PROTOCOL_VERSION = 6
RESULTS_FILE = "results.bin"
RECORD_LENGTH = struct.Struct("<Q")
MAX_INDEX_BYTES = 1 << 20
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
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
# (`grader/sandbox/protocol.py`, `grader/verdict/plan.py`) and reads the result records with
# strict pydantic models of the same names (`grader/sandbox/results.py`), which a test holds
# field for field to these.

# -- the job: host to worker


class IndexEntry(TypedDict):
    id: str
    timeout: float
    size: int  # bytes of the problem's part in the stream


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
    expect_error: bool  # read by the host only: the reference itself raises


class Probe(ProbeRequest):
    id: str


class ProblemJob(TypedDict):
    """A problem's part of the job, besides its tensors."""

    entry: str
    traces: list[str]
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


class CallResult(TypedDict):
    outputs: list[TensorOut | ValueOut]
    container: str | None
    length: int
    grads: dict[str, str | None]
    trace: list[TraceEntry]
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


class ProbeData(TypedDict):
    id: str
    error: ErrorInfo | None
    inspect: InspectInfo | None
    load: LoadInfo | None
    calls: list[CallResult]


class ImportStatus(TypedDict):
    import_error: ErrorInfo | None


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


class StubModule(nn.Module):
    """The grader's own module handed to a candidate's function: layers and attributes only."""

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the grader's module may not be called: use its layers and weights")


class Recorder:
    """Wraps library functions so that each call made by candidate code is noted."""

    def __init__(self) -> None:
        self.calls: list[TraceEntry] = []

    def install(self, names: list[str]) -> None:
        for name in names:
            owner, attr, describe = TRACEABLE[name]
            original = getattr(owner, attr)
            setattr(owner, attr, self._wrap(name, original, describe))

    def _wrap(
        self, name: str, original: Callable[..., Any], describe: Describe
    ) -> Callable[..., Any]:
        def traced(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(describe(name, *args, **kwargs))
            return original(*args, **kwargs)

        return traced


Describe = Callable[..., TraceEntry]
"""Called as `describe(name, *args, **kwargs)` with a traced call's name and arguments."""


def _describe_sdpa(fn: str, *args: Any, **kwargs: Any) -> TraceEntry:
    names = ["query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale"]
    bound = dict(zip(names, args, strict=False))
    bound.update(kwargs)
    return {
        "fn": fn,
        "is_causal": bool(bound.get("is_causal", False)),
        "dropout_p": float(bound.get("dropout_p", 0.0)),
        "scale": None if bound.get("scale") is None else float(bound["scale"]),
        "attn_mask": bound.get("attn_mask") is not None,
        "query_shape": list(bound["query"].shape) if "query" in bound else None,
    }


def _describe_nothing(fn: str, *args: Any, **kwargs: Any) -> TraceEntry:
    return {"fn": fn}


TRACEABLE: dict[str, tuple[Any, str, Describe]] = {
    "scaled_dot_product_attention": (
        torch.nn.functional,
        "scaled_dot_product_attention",
        _describe_sdpa,
    ),
    "multi_head_attention_forward": (
        torch.nn.functional,
        "multi_head_attention_forward",
        _describe_nothing,
    ),
    "MultiheadAttention.forward": (nn.MultiheadAttention, "forward", _describe_nothing),
}


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
    recorder: Recorder | None = None,
    source_root: str = "",
) -> tuple[ProbeData, dict[str, torch.Tensor]]:
    """Run one probe against `namespace` (a module's globals) and return its result data; in
    the sandbox, error frames are those of files under `source_root`."""
    result: ProbeData = {
        "id": probe["id"],
        "error": None,
        "inspect": None,
        "load": None,
        "calls": [],
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
        for index, call in enumerate(probe["calls"]):
            stage = "call"
            result["calls"].append(run_call(target, call, index, inputs, tensors, recorder))
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
    stub = StubModule()
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
    recorder: Recorder | None,
) -> CallResult:
    """Call the target once, optionally backpropagate, and describe what came back."""
    args = [build_arg(a, inputs) for a in call["args"]]
    kwargs = {k: build_arg(v, inputs) for k, v in call["kwargs"].items()}
    seed = call.get("seed")
    if seed is not None:
        seed_cpu(int(seed))
    if recorder is not None:
        recorder.calls.clear()
    start = time.perf_counter()
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
            loss.backward()
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
        "trace": list(recorder.calls) if recorder is not None else [],
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
    """One problem of the job: its id, its timeout, and the memory file holding its part."""

    id: str
    timeout: float
    fd: int


def read_job(fd: int) -> list[Part]:
    """Read the job stream from the pipe `fd` (see `grader/sandbox/protocol.py`): the index into
    memory, each problem's part into its own memory file, never through this process's memory."""
    (size,) = struct.unpack("<Q", read_exact(fd, 8))
    if size > MAX_INDEX_BYTES:
        raise ValueError(f"job index of {size} bytes")
    index: JobIndex = json.loads(read_exact(fd, size))
    if index.get("version") != PROTOCOL_VERSION:
        raise ValueError(f"job of protocol {index.get('version')}, worker {PROTOCOL_VERSION}")
    parts = [
        Part(p["id"], float(p["timeout"]), splice_to_memory(fd, int(p["size"]), p["id"]))
        for p in index["problems"]
    ]
    return parts


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


def run_problem(parts: list[Part], submission: str, out: Path, inherited: tuple[int, ...]) -> None:
    """Child process: import the candidate's entry file and run every probe of one problem,
    the first of `parts` (the parts still open: this one and those of later problems), once
    the worker's own descriptors (`inherited`: the result stream, the host's) are closed."""
    part = parts[0]
    problem, inputs = load_part(part.fd)
    for fd in (*inherited, *(p.fd for p in parts)):
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    folder = out / part.id
    for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
        target = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    recorder = Recorder()
    recorder.install(problem["traces"])
    os.chdir(submission)
    sys.path.append(submission)
    sys.dont_write_bytecode = True
    status: ImportStatus = {"import_error": None}
    try:
        module = importlib.import_module(Path(problem["entry"]).stem)
    except BaseException as exc:  # candidate code may raise anything
        status["import_error"] = describe_error(exc, "import", 0, submission)
        write_json(folder / "import.json", status)
        exit_child(0)
    write_json(folder / "import.json", status)
    namespace = vars(module)
    for probe in problem["probes"]:
        result, tensors = run_probe(namespace, probe, inputs, "sandbox", recorder, submission)
        append_record(folder / RESULTS_FILE, result, tensors)
    exit_child(0)


def append_record(path: Path, result: ProbeData, tensors: dict[str, torch.Tensor]) -> None:
    """Append one probe's record, in one write: its JSON and its tensors, each after its u64
    length. A record cut short (the child killed while writing it) is the file's last."""
    body, blob = json.dumps(result).encode(), encode_tensors(tensors)
    record = b"".join((RECORD_LENGTH.pack(len(body)), body, RECORD_LENGTH.pack(len(blob)), blob))
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
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(data))
    partial.replace(path)


def fresh_folder(path: Path) -> None:
    """An empty directory at `path`, whatever an earlier problem left there."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
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
    if root.is_dir() and not root.is_symlink():
        root.chmod(0o755)
        empty(root)
    else:
        with contextlib.suppress(FileNotFoundError):
            root.unlink()
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
            shutil.rmtree(folder)

    def close(self) -> None:
        if self.tar is not None:
            self.tar.close()
        if self.file is not None:
            self.file.close()


# ---------------------------------------------------------------------------- warm serving


SCRATCH_ROOTS = (Path("/tmp"), Path("/dev/shm"))
"""Where a submission can write besides the output folder: emptied after each one."""
SUBMISSION_DIR = Path("/tmp/submission")
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


def own_state() -> dict[str, Json]:
    """What another process of this uid could change about this one, and children inherit:
    its rlimits (prlimit), niceness, CPU affinity and scheduling."""
    limits = {
        name: list(resource.getrlimit(getattr(resource, name)))
        for name in dir(resource)
        if name.startswith("RLIMIT_")
    }
    return {
        "rlimits": limits,
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "affinity": sorted(os.sched_getaffinity(0)),
        "scheduler": os.sched_getscheduler(0),
        "priority": os.sched_getparam(0).sched_priority,
    }


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


def empty(folder: Path) -> None:
    """Delete everything inside `folder`, whatever modes a submission gave it."""
    for entry in os.scandir(folder):
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            path.chmod(0o700)
            empty(path)
            path.rmdir()
        else:
            path.unlink()


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
        run_submission(parts, str(SUBMISSION_DIR), files, out, inherited, FrameWriter(channel))
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
    for root in (*SCRATCH_ROOTS, out):
        empty(root)
    left = leftovers(out)
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
) -> None:
    """Run each problem of the job in a child of its own (which first closes the `inherited`
    descriptors), one after another, on the submission's `files` written anew (None: its
    folder is read-only), and send each problem's files on `sink` as soon as its processes are
    gone, or leave them without one."""
    emitter = Emitter(out, sink)
    write_json(out / "worker.json", worker_report())
    emitter.send(out / "worker.json")
    for index, part in enumerate(parts):
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
                run_problem(parts[index:], submission, out, inherited)
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
        write_json(folder / "exit.json", ended)
        emitter.send_results(folder)
        os.close(part.fd)
    emitter.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submission")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--emit-tar", action="store_true")
    parser.add_argument("--serve", type=int, metavar="K", help="serve up to K submissions")
    args = parser.parse_args(argv)

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
    run_submission(parts, str(submission), files, args.out, (data_fd,), sink)
    if sink is None:
        os.close(data_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
