"""The probe executor: one probe (build, inspect, load, set up, call) on a namespace, its data
and tensors out. The host runs the reference through the very same code.
"""

from __future__ import annotations

import contextlib
import math
import os
import reprlib
import time
import traceback
from typing import Any

import torch
from torch import nn

from sandbox.counter import Counting
from sandbox.guard import GUARD
from sandbox.policy import StubModule
from sandbox.protocol import (
    Argument,
    AttrValue,
    BufferInfo,
    Call,
    CallResult,
    ErrorInfo,
    Frame,
    InspectInfo,
    LoadInfo,
    Mismatch,
    Mode,
    ModuleInfo,
    Namespace,
    ParamInfo,
    Probe,
    ProbeData,
    SetupOp,
    Stage,
    Stub,
    TensorOut,
    ValueOut,
)

MAX_MESSAGE = 2000
MAX_FRAMES = 8
MAX_OUTPUTS = 16


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
    """Call the target once (counting the operators it runs if `counted`), optionally
    backpropagate, and describe what came back with the calls the guard traced."""
    args = [build_arg(a, inputs) for a in call["args"]]
    kwargs = {k: build_arg(v, inputs) for k, v in call["kwargs"].items()}
    seed = call.get("seed")
    if seed is not None:
        seed_cpu(int(seed))
    GUARD.trace.clear()
    counter = Counting() if counted else None
    start = time.perf_counter()
    with counter or contextlib.nullcontext(), GUARD.watching(counter):
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
        "ops": counter.counted if counter is not None else None,
        "seconds": seconds,
    }


def plain(t: torch.Tensor) -> torch.Tensor:
    """`t` as a plain tensor, sharing its data and its place in the autograd graph: what a
    subclass says of itself (its methods, its `__torch_function__`) is not asked."""
    if type(t) is torch.Tensor:
        return t
    with torch._C.DisableTorchFunctionSubclass():
        return torch.Tensor.as_subclass(t, torch.Tensor)


def save_tensor(t: torch.Tensor | None, key: str, tensors: dict[str, torch.Tensor]) -> str | None:
    """Keep a copy of `t` under `key`; None for what safetensors cannot store (the host is told
    the shape and dtype only)."""
    t = None if t is None else plain(t)
    if t is None or t.device.type == "meta" or t.layout != torch.strided:
        return None
    if t.is_complex() or t.is_quantized or t.is_nested:
        return None
    tensors[key] = t.detach().cpu().contiguous().clone()
    return key


def describe_output(out: Any, key: str, tensors: dict[str, torch.Tensor]) -> TensorOut | ValueOut:
    if isinstance(out, torch.Tensor):
        out = plain(out)
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
