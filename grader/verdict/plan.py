"""A problem's plan: the probes the host asks for and every tensor they name.

Checks add probes to a plan; identical probes are asked for once. The plan is built once per
run (seed and secret) and problem, and is the same for every submission of the batch.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import zlib
from typing import Any, Literal

import torch

from grader.errors import GraderFault
from grader.sandboxing.results import ErrorInfo
from grader.specs.problem import Config, ModuleArg, ProblemSpec, TensorArg
from grader.verdict.reference import ReferenceSource
from sandbox.protocol import (
    Argument,
    Call,
    Probe,
    ProbeRequest,
    ProblemJob,
    SetupOp,
    StubArgument,
    TensorArgument,
    family_of,
)

Dtype = Literal["float32", "float64"]
Mode = Literal["eval", "train"]


def draw(
    seed: int, label: str, shape: list[int], scale: float = 1.0, secret: bytes | None = None
) -> torch.Tensor:
    """A standard normal tensor determined by the run's seed, its secret and a label. Without a
    secret the seed and the label alone decide it: whoever knows the seed can draw it too."""
    generator = torch.Generator().manual_seed(stream(seed, label, secret))
    return torch.randn(shape, generator=generator, dtype=torch.float32) * scale


def stream(seed: int, label: str, secret: bytes | None) -> int:
    """The generator seed of one drawn tensor: a keyed hash (HMAC-SHA256) of the seed and the
    label under the secret, which nobody can compute without it."""
    if secret is None:
        return (seed * 1_000_003 + zlib.crc32(label.encode())) % 2**63
    digest = hmac.new(secret, f"{seed}/{label}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % 2**63


def draw_seed(seed: int | None = None) -> int:
    """`seed`, or a fresh random one when none is given."""
    return seed if seed is not None else secrets.randbelow(2**31)


class Plan:
    """Probes and tensors for one problem; what it needs of the reference comes from `source`
    (the live reference solutions, or a kit's record of them, whose inputs it then takes). Its
    inputs are drawn from `seed` and `secret` (`draw`), which stays on the host: the worker is
    sent the drawn tensors only."""

    def __init__(
        self, spec: ProblemSpec, seed: int, source: ReferenceSource, secret: bytes | None = None
    ) -> None:
        self.spec = spec
        self.seed = seed
        self.secret = secret
        self.source = source
        self.tensors: dict[str, torch.Tensor] = source.inputs(spec.id)
        self.probes: dict[str, Probe] = {}
        self.key = secrets.token_bytes(32)  # seals the problem's records in the sandbox
        self._by_content: dict[str, str] = {}
        self.used: set[str] = set()  # the configs whose inputs or weights a probe asked for

    def copy(self) -> Plan:
        """A plan with the same probes and tensors, to which more may be added apart."""
        other = Plan.__new__(Plan)
        vars(other).update(vars(self))
        other.tensors, other.probes = dict(self.tensors), dict(self.probes)
        other._by_content, other.used = dict(self._by_content), set(self.used)
        return other

    # -- tensors

    def tensor(self, label: str, shape: list[int], scale: float = 1.0) -> str:
        key = f"{self.spec.id}/{label}"
        if key not in self.tensors:
            self.tensors[key] = draw(self.seed, key, shape, scale, self.secret)
        return key

    def put(self, label: str, value: torch.Tensor) -> str:
        key = f"{self.spec.id}/{label}"
        self.tensors[key] = value.detach().contiguous()
        return key

    def as_dtype(self, key: str, dtype: Dtype) -> str:
        if dtype == "float32":
            return key
        label = key.removeprefix(f"{self.spec.id}/") + "@f64"
        return self.put(label, self.tensors[key].double())

    # -- modules and weights

    def weights(self, config: Config, problem: str | None = None) -> dict[str, str]:
        """Weights for every reference parameter: name -> tensor key (scaled like Linear init)."""
        self.used.add(config.id)
        init = config.init if problem is None else None
        assert init is not None or problem is not None
        if problem is None:
            shapes = self.source.parameters(self.spec.id, self.spec.symbol, init or {})
        else:
            shapes = self.source.parameters(problem, None, {})
        prefix = f"w/{config.id}" if problem is None else f"w/{config.id}/{problem}"
        names = {}
        for name, shape in shapes:
            fan_in = shape[-1] if len(shape) > 1 else shape[0]
            names[name] = self.tensor(f"{prefix}/{name}", shape, fan_in**-0.5)
        return names

    def stub(self, config: Config, arg: ModuleArg, index: int, dtype: Dtype) -> StubArgument:
        """The worker-side stand-in for the grader's module of another problem."""
        linears: dict[str, dict[str, str]] = {}
        prefix = f"w/{config.id}/arg{index}"
        for name, shape in self.source.parameters(arg.module, None, arg.init):
            layer, _, kind = name.rpartition(".")
            fan_in = shape[-1] if len(shape) > 1 else shape[0]
            key = self.tensor(f"{prefix}/{name}", shape, fan_in**-0.5)
            linears.setdefault(layer, {})[kind] = key
        attrs = self.source.attributes(arg.module, arg.init, arg.expose)
        return {"stub": {"linears": linears, "attrs": attrs, "dtype": dtype}}

    # -- arguments

    def args(
        self, config: Config, dtype: Dtype = "float32", grad: bool | None = None
    ) -> list[Argument]:
        """The call arguments of a config as the worker reads them."""
        self.used.add(config.id)
        out: list[Argument] = []
        for i, arg in enumerate(config.args):
            if isinstance(arg, TensorArg):
                key = self.as_dtype(self.tensor(f"x/{config.id}/{i}", arg.shape), dtype)
                described: TensorArgument = {"tensor": key, "layout": arg.layout}
                if grad is not None:
                    described["grad"] = grad
                out.append(described)
            elif isinstance(arg, ModuleArg):
                out.append(self.stub(config, arg, i, dtype))
            else:
                out.append({"value": arg})
        return out

    @staticmethod
    def tensor_argument(args: list[Argument], position: int) -> TensorArgument:
        """The argument at `position`, which must be a tensor."""
        arg = args[position]
        if "tensor" not in arg:
            raise ValueError(f"argument {position} is not a tensor")
        return arg

    def mask_kwargs(self, config: Config) -> dict[str, TensorArgument]:
        if config.mask is None:
            return {}
        return {"mask": {"tensor": self.put(f"mask/{config.id}", make_mask(config))}}

    # -- probes

    def probe(self, request: ProbeRequest) -> str:
        """Register a probe (deduplicated by content) and return its id."""
        content = json.dumps(request, sort_keys=True)
        if content not in self._by_content:
            probe_id = f"p{len(self.probes)}"
            self._by_content[content] = probe_id
            self.probes[probe_id] = {"id": probe_id, **request}
        return self._by_content[content]

    def call_probe(
        self,
        config: Config,
        dtype: Dtype = "float32",
        mode: Mode = "eval",
        setup: list[SetupOp] | None = None,
        backward: bool = False,
        seeds: list[int | None] | None = None,
        inspect: list[str] | None = None,
        init: dict[str, Any] | None = None,
        args: list[Argument] | None = None,
        more_args: list[list[Argument]] | None = None,
        expect_error: bool = False,
        call: bool = True,
        weights: dict[str, str] | None = None,
        gradient: str | None = None,
        count_ops: bool = False,
    ) -> str:
        """The common probe: build (modules), load weights (the config's, unless `weights`
        names others), set up, then one call per seed (and per extra argument list in
        `more_args`); `backward` backpropagates a random gradient, or `gradient` if given;
        `count_ops` counts the torch functions each call runs."""
        first = args if args is not None else self.args(config, dtype, grad=backward)
        kwargs = self.mask_kwargs(config)
        if backward and gradient is None:
            gradient = self.grad_output(config, dtype)
        backward_with: list[str | None] | None = [gradient] if gradient is not None else None
        calls: list[Call] = []
        for call_args in [first, *(more_args or [])] if call else []:
            for seed in seeds or [None]:
                entry: Call = {"args": call_args, "kwargs": dict(kwargs), "seed": seed}
                if backward_with is not None:
                    entry["backward"] = list(backward_with)
                calls.append(entry)
        request: ProbeRequest = {"calls": calls, "symbol": config.symbol or self.spec.symbol}
        if expect_error:
            request["expect_error"] = True
        if count_ops:
            request["count_ops"] = True
        if self.spec.kind == "module":
            steps = list(setup or [])
            if dtype == "float64":
                steps.insert(0, {"op": "double"})
            request["init"] = init if init is not None else config.init
            request["weights"] = weights if weights is not None else self.weights(config)
            request["setup"] = steps
            request["mode"] = mode
            request["inspect"] = inspect
        return self.probe(request)

    def grad_output(self, config: Config, dtype: Dtype) -> str:
        """A random gradient for the first output, shaped like the reference's output."""
        probe: Probe = {
            "id": "shape",
            "symbol": config.symbol or self.spec.symbol,
            "init": config.init,
            "calls": [{"args": self.args(config), "kwargs": dict(self.mask_kwargs(config))}],
        }
        result, _ = self.source.run(self.spec.id, probe, self.tensors)
        if result["error"] is not None:
            error = ErrorInfo.model_validate(result["error"])
            raise GraderFault(
                f"{self.spec.id}: the reference failed on {config.id}: {error.summary()}"
            )
        output = result["calls"][0]["outputs"][0]
        assert output["kind"] == "tensor", output
        shape = output["shape"]
        return self.as_dtype(self.tensor(f"g/{config.id}", shape), dtype)

    def job(self) -> ProblemJob:
        """This problem's part of the worker's job: its probes, and the attention families its
        forbidden names belong to, which the sandbox's guard refuses."""
        families = {family_of(name) for name in self.spec.forbidden}
        refuse = sorted(f for f in families if f is not None)
        return {
            "entry": self.spec.entry,
            "refuse": refuse,
            "key": self.key.hex(),
            "probes": list(self.probes.values()),
        }


def make_mask(config: Config) -> torch.Tensor:
    """A bool mask (True = may not attend) that never masks a whole row."""
    batch, tokens = config.args[0].shape[0], config.args[0].shape[1]  # type: ignore[union-attr]
    heads = int((config.init or {}).get("num_heads", 1))
    causal = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)
    if config.mask == "causal":
        return causal
    if config.mask == "padding":
        lengths = torch.tensor([max(1, tokens - 1 - 2 * b) for b in range(batch)])
        keep = torch.arange(tokens)[None, :] < lengths[:, None]
        return ~keep[:, None, None, :]
    generator = torch.Generator().manual_seed(tokens * 31 + heads)
    per_head = torch.rand(batch, heads, tokens, tokens, generator=generator) < 0.4
    per_head &= ~torch.eye(tokens, dtype=torch.bool)
    return per_head
