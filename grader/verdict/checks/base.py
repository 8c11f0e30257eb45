"""The check library's frame: a check asks for probes, then judges their results on the host."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Generic, cast, get_args

import torch
from pydantic import Field
from typing_extensions import TypeVar

from grader.reports.models import AttentionPattern, CheckStatus, Diagnosis
from grader.sandboxing.ownmessage import Known, Template, literal_templates
from grader.sandboxing.results import (
    BufferInfo,
    CallResult,
    ErrorInfo,
    ModuleInfo,
    ParamInfo,
    ProbeResult,
    ProblemRun,
    TensorOut,
    ValueOut,
    nonconformity,
)
from grader.specs.problem import Arg, CheckSpec, Config, ModuleArg, ProblemSpec, TensorArg
from grader.strict import Strict
from grader.verdict.checks.returned import (
    dtype_text,
    fits,
    nonfinite_text,
    returned_text,
    same_form,
    tensor_text,
    value_text,
)
from grader.verdict.checks.scope import Sources
from grader.verdict.diagnose import BUILTIN, Diagnoses, locate
from grader.verdict.missing import Missing, malformed, missing_text, why_missing
from grader.verdict.plan import Plan
from grader.verdict.suggest import constructor_mismatch, missing_symbol


class NoParams(Strict):
    """A check's params: none unless a subclass declares them."""


class ConfigParams(NoParams):
    """Which of the problem's configs a check probes (all of them by default)."""

    configs: list[str] | None = Field(
        None,
        description="Config ids (default: every config with something to call, whose inputs "
        "then go into the kit when the check is visible).",
    )


P = TypeVar("P", bound=NoParams, covariant=True, default=NoParams)
"""A check's params model; a bare `Check` is a check of any params."""


class Failure(Exception):
    """The candidate's code did not give what a check needs: a verdict, not a grader fault."""

    def __init__(
        self,
        message: str,
        status: CheckStatus = CheckStatus.failed,
        missing: Missing | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.missing = missing


def describe(config: Config) -> str:
    """A probe config by what it is: `n_embd=48, n_head=4, input (2, 8, 48)`."""
    parts = [f"{k}={v}" for k, v in (config.init or {}).items()]
    parts += [arg_text(arg) for arg in config.args]
    return ", ".join(parts) or f"config {config.id}"


def arg_text(arg: Arg) -> str:
    """`input (2, 8, 48)`, `a non-contiguous input (2, 8, 48)`, `the grader's
    causal_self_attention(n_embd=48, ...)`, or a plain value."""
    if isinstance(arg, TensorArg):
        layout = "a non-contiguous input" if arg.layout == "noncontiguous" else "input"
        return f"{layout} ({', '.join(str(s) for s in arg.shape)})"
    if isinstance(arg, ModuleArg):
        init = ", ".join(f"{k}={v}" for k, v in arg.init.items())
        return f"the grader's {arg.module}({init})"
    return repr(arg)


def config_text(config: Config) -> str:
    """The config a message is about, as a candidate reads it: `with n_embd=48, ...`."""
    return f"with {describe(config)}"


@contextmanager
def about(config: Config) -> Iterator[None]:
    """Name the config in a Failure raised while judging it."""
    try:
        yield
    except Failure as failure:
        failure.message = f"{config_text(config)}: {failure.message}"
        raise


@dataclass
class Verdict:
    status: CheckStatus
    message: str = ""
    diagnosis: Diagnosis | None = None
    public: str | None = None  # the message without the candidate's own text, where it differs
    pattern: AttentionPattern | None = None
    missing: Missing | None = None  # why there was no result to judge, if that is the verdict


@dataclass
class Context:
    """What a check judges: the candidate's results, the reference's, and the source files."""

    spec: ProblemSpec
    plan: Plan
    sub: ProblemRun
    ref: dict[str, ProbeResult]
    sources: Sources

    @cached_property
    def files(self) -> dict[str, int]:
        """The submission's Python files and their number of lines: where an error's place
        may be shown to the candidate (`ErrorInfo.summary`)."""
        return {path: len(file.data.splitlines()) for path, file in self.sources.files.items()}

    @cached_property
    def names(self) -> frozenset[str]:
        """The words a name the candidate's module reported may be shown to them in: the
        identifiers of their files and the parts of the grader's own names (the reference's
        parameters, buffers and submodules, the weights it loads)."""
        words = {word for file in self.sources.files.values() for word in file.identifiers}
        ours = [name for result in self.ref.values() for name in inspected_names(result)]
        ours += [name for probe in self.plan.probes.values() for name in probe.get("weights") or {}]
        return frozenset(words | {part for name in ours for part in name.split(".")})

    @cached_property
    def templates(self) -> list[Template]:
        """The forms of the messages the candidate's files spell out (`literal_templates`)."""
        return literal_templates(s for f in self.sources.files.values() for s in f.literals)

    def known(self, probe_id: str | None = None) -> Known:
        """What the candidate may be shown of their exception's message (`shown_message`):
        `names` and the contract's (the symbols and keywords the probes pass), the sizes the
        grader knows for the probe, and the forms of the candidate's own literals."""
        probes = self.plan.probes.values()
        contract = {str(p["symbol"]) for p in probes} | {
            str(key) for p in probes for key in p.get("init") or {}
        }
        sizes = self.sizes(probe_id) if probe_id is not None else frozenset()
        return Known(self.names | contract, sizes, self.templates)

    def sizes(self, probe_id: str) -> frozenset[int]:
        """The sizes the grader itself knows for a probe: the dimensions of its input tensors
        and of the reference's outputs, parameters and buffers. A shape the candidate's code
        reported shows the candidate these only (`own_shape`)."""
        tensors = self.plan.tensors
        shapes = [
            list(tensors[k].shape) for k in strings(self.plan.probes[probe_id]) if k in tensors
        ]
        data = self.reference(probe_id).data
        shapes += [o.shape for c in data.calls for o in c.outputs if isinstance(o, TensorOut)]
        if data.inspect is not None:
            shapes += [p.shape for p in data.inspect.params]
            shapes += [b.shape for b in data.inspect.buffers]
        return frozenset(size for shape in shapes for size in shape)

    def result(self, probe_id: str) -> ProbeResult:
        """The candidate's result for a probe; a Failure says why there is none, or that it raised
        or lacks what the probe asked for."""
        result = self.sub.probes.get(probe_id)
        if result is None:
            raise self.missing()
        if result.data.error is not None:
            error = result.data.error
            self.found_symbol(probe_id, error)
            stage = {
                "init": "the constructor raised",
                "inspect": "the module could not be inspected",
                "load": "the grader's weights could not be loaded",
                "setup": "moving or converting the module failed",
                "call": "the call raised",
                "import": "importing the file raised",
            }[error.stage]
            said = error.summary(self.files, self.known(probe_id))
            hint = self.constructor_hint(probe_id, error)
            raise Failure(f"{stage}: {said}{hint}", CheckStatus.error)
        gap = nonconformity(result.data, self.plan.probes[probe_id])
        if gap is not None:
            raise Failure(malformed(f"{probe_id}: {gap}"), CheckStatus.error)
        return result

    def constructor_hint(self, probe_id: str, error: ErrorInfo) -> str:
        """Where the class the probe constructs takes other keywords than the contract passes
        (`constructor_mismatch`), when the call itself raised a TypeError: before any line of
        the candidate's code ran, so with no place of theirs."""
        if error.stage != "init" or error.type != "TypeError" or error.frames:
            return ""
        probe = self.plan.probes[probe_id]
        passed = [str(key) for key in probe.get("init") or {}]
        return constructor_mismatch(self.sources, self.spec.entry, str(probe["symbol"]), passed)

    def found_symbol(self, probe_id: str, error: ErrorInfo) -> None:
        """A Failure naming what to rename when `error` is the worker's lookup of the probe's
        symbol (a KeyError before any of the candidate's code ran) and the module binds no
        such name; the candidate's own error otherwise."""
        if error.stage == "init" and error.type == "KeyError" and not error.frames:
            symbol = self.plan.probes[probe_id]["symbol"]
            absent = missing_symbol(self.sources, self.spec.entry, symbol)
            if absent is not None:
                raise Failure(absent, CheckStatus.error)

    def reference(self, probe_id: str) -> ProbeResult:
        return self.ref[probe_id]

    def expected(self, probe_id: str, call: int = 0, index: int = 0) -> torch.Tensor:
        """The reference's output `index` of call `call`, a tensor the plan asked for."""
        tensor = self.reference(probe_id).output(call, index)
        if tensor is None:
            raise Failure(f"the reference returned no tensor for {probe_id}", CheckStatus.error)
        return tensor

    def returned(self, probe_id: str, call: int = 0, index: int = 0) -> TensorOut:
        """What the worker noted of output `index` of call `call` (shape, dtype, layout), once
        the call returned the reference's form (one value, or a tuple of as many) with a tensor
        there. A Failure says what came back instead."""
        got = self.result(probe_id).data.calls[call]
        want = self.reference(probe_id).data.calls[call]
        if not same_form(got, want):
            sizes = self.sizes(probe_id)
            got_text, want_text = returned_text(got, sizes), returned_text(want, sizes)
            raise Failure(f"returned {got_text}, expected {want_text}")
        out = got.outputs[index]
        if not isinstance(out, TensorOut):
            raise unlike(out, want, index, self.sizes(probe_id))
        return out

    def output(
        self, probe_id: str, call: int = 0, index: int = 0, *, finite: bool = True
    ) -> torch.Tensor:
        """Output `index` of call `call`, as `returned` accepts it, and a tensor of the
        reference's shape, floating where the reference's is, and free of NaN and inf if
        `finite`. A Failure says what came back instead."""
        out = self.returned(probe_id, call, index)
        want = self.reference(probe_id).data.calls[call]
        expected = want.outputs[index]
        assert isinstance(expected, TensorOut)
        if not fits(out, expected):
            raise unlike(out, want, index, self.sizes(probe_id))
        tensor = self.result(probe_id).stored(out)
        if tensor is None and out.key is None:  # the worker stores dense tensors only
            shown = value_text(out, self.sizes(probe_id))
            raise Failure(f"{subject(want, index)} {shown} that is not a dense tensor")
        if tensor is None:
            where = f"output {index} of {probe_id}"
            raise Failure(malformed(f"{where} is not stored as described"), CheckStatus.error)
        if finite and not bool(torch.isfinite(tensor).all()):
            where = locate((~torch.isfinite(tensor)).double(), None)
            label = "the output" if want.container is None else f"output {index}"
            raise Failure(f"{label} holds {nonfinite_text(tensor)} (first at {where})")
        return tensor

    def one_number(self, probe_id: str, call: int = 0, index: int = 0) -> bool:
        """Whether output `index` of call `call` is one number everywhere where the reference's
        is not: an output that holds a property so shows nothing of it (zeros ignore every
        masked key, and two paths that return zeros agree)."""
        got, want = self.output(probe_id, call, index), self.expected(probe_id, call, index)
        same = bool(got.numel()) and bool((got == got.flatten()[0]).all())
        return same and not bool((want == want.flatten()[0]).all())

    def gradient(self, probe_id: str, name: str) -> torch.Tensor | None:
        """The gradient of the probe's first call for `name` (`arg0`, `param:proj.weight`), or
        None if none reached it; a Failure when it is not shaped as the reference's."""
        got = self.result(probe_id).grad(0, name)
        want = self.reference(probe_id).grad(0, name)
        if got is None or want is None:
            return got
        if got.shape != want.shape or not got.is_floating_point():
            sizes = self.sizes(probe_id)
            raise Failure(
                f"the gradient of {gradient_label(name)} is "
                f"{tensor_text(list(got.shape), dtype_text(got.dtype), sizes)}, expected "
                f"{tensor_text(list(want.shape), dtype_text(want.dtype), sizes)}"
            )
        return got

    def missing(self) -> Failure:
        """The error of a check whose probe has no result, with the reason why."""
        reason = why_missing(self.sub)
        text = missing_text(reason, self.sub, self.spec, self.files, self.known())
        return Failure(text, CheckStatus.error, reason)


def inspected_names(result: ProbeResult) -> list[str]:
    """The names of a (reference) module's parameters, buffers and submodules."""
    info = result.data.inspect
    if info is None:
        return []
    parts: list[ParamInfo | BufferInfo | ModuleInfo] = [*info.params, *info.buffers, *info.modules]
    return [part.name for part in parts]


def strings(value: object) -> Iterator[str]:
    """Every string value in JSON-like data (a probe: among them, the keys of its tensors)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def subject(want: CallResult, index: int) -> str:
    """How a message names output `index` of a call shaped like `want`."""
    return "returned" if want.container is None else f"output {index} is"


def unlike(
    got: TensorOut | ValueOut, want: CallResult, index: int, sizes: frozenset[int]
) -> Failure:
    """Output `index` is not what the reference's call `want` has there (`sizes`: the probe's)."""
    expected = value_text(want.outputs[index], sizes)
    return Failure(f"{subject(want, index)} {value_text(got, sizes)}, expected {expected}")


def gradient_label(name: str) -> str:
    return "the input" if name.startswith("arg") else name.removeprefix("param:")


class Check(Generic[P]):
    """A reusable check of params `P`: a subclass names its params model once, as in
    `class Mine(Check[MyParams])`, and implements `prepare` and `judge`."""

    id: ClassVar[str]
    params_model: ClassVar[type[NoParams]] = NoParams
    """`P` at run time, taken from the class statement."""
    diagnoses: Diagnoses = BUILTIN
    """The forms and mistakes its problem's diagnosis may name (its course's too)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in cls.__dict__.get("__orig_bases__", ()):
            named = [a for a in get_args(base) if isinstance(a, type) and issubclass(a, NoParams)]
            if named:
                cls.params_model = named[0]

    def __init__(self, spec: CheckSpec, problem: ProblemSpec) -> None:
        self.spec = spec
        self.problem = problem
        self._params = cast(P, self.params_model.model_validate(spec.params))

    @property
    def params(self) -> P:
        return self._params

    def configs(self) -> list[Config]:
        """The configs the params name, or every config with something to call."""
        wanted = self.params.configs if isinstance(self.params, ConfigParams) else None
        if wanted is None:
            return [c for c in self.problem.configs if c.init is not None or c.args]
        return [self.problem.config(c) for c in wanted]

    def prepare(self, plan: Plan) -> None:
        """Register the probes this check needs."""

    def judge(self, ctx: Context) -> Verdict:
        raise NotImplementedError


CHECKS: dict[str, type[Check]] = {}
"""The library: every check a spec may declare."""

_OWN: ContextVar[dict[str, type[Check]] | None] = ContextVar("own_checks", default=None)

C = TypeVar("C", bound=type[Check])


@contextmanager
def own_checks() -> Iterator[dict[str, type[Check]]]:
    """Collect the checks registered meanwhile (a problem's `checks.py`) apart from the library,
    so that two problems, or two courses, may each define theirs."""
    found: dict[str, type[Check]] = {}
    token = _OWN.set(found)
    try:
        yield found
    finally:
        _OWN.reset(token)


def register(check_id: str) -> Callable[[C], C]:
    """Add a check class under `check_id`: to the library, or to the problem being loaded."""

    def add(cls: C) -> C:
        own = _OWN.get()
        if own is not None and check_id in CHECKS:
            raise ValueError(f"check {check_id!r} is a library check: give yours another name")
        target = CHECKS if own is None else own
        if check_id in target and target[check_id] is not cls:
            raise ValueError(f"check {check_id!r} is registered twice")
        cls.id = check_id
        target[check_id] = cls
        return cls

    return add
