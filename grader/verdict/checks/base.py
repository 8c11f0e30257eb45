"""The check library's frame: a check asks for probes, then judges their results on the host."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, cast, get_args

import torch
from typing_extensions import TypeVar

from grader.courses.spec import Arg, CheckSpec, Config, ModuleArg, ProblemSpec, TensorArg
from grader.reports.models import AttentionPattern, CheckStatus, Diagnosis
from grader.sandbox.results import (
    CallResult,
    ProbeResult,
    ProblemRun,
    TensorOut,
    ValueOut,
    nonconformity,
)
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
from grader.verdict.diagnose import locate
from grader.verdict.missing import Missing, malformed, missing_text, why_missing
from grader.verdict.plan import Plan


class NoParams(Strict):
    """A check's params: none unless a subclass declares them."""


class ConfigParams(NoParams):
    """Which of the problem's configs a check probes (all of them by default)."""

    configs: list[str] | None = None


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

    def result(self, probe_id: str) -> ProbeResult:
        """The candidate's result for a probe; a Failure says why there is none, or that it raised
        or lacks what the probe asked for."""
        result = self.sub.probes.get(probe_id)
        if result is None:
            raise self.missing()
        if result.data.error is not None:
            error = result.data.error
            stage = {
                "init": "the constructor raised",
                "inspect": "the module could not be inspected",
                "load": "the grader's weights could not be loaded",
                "setup": "moving or converting the module failed",
                "call": "the call raised",
                "import": "importing the file raised",
            }[error.stage]
            raise Failure(f"{stage}: {error.summary()}", CheckStatus.error)
        gap = nonconformity(result.data, self.plan.probes[probe_id])
        if gap is not None:
            raise Failure(malformed(f"{probe_id}: {gap}"), CheckStatus.error)
        return result

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
            raise Failure(f"returned {returned_text(got)}, expected {returned_text(want)}")
        out = got.outputs[index]
        if not isinstance(out, TensorOut):
            raise unlike(out, want, index)
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
            raise unlike(out, want, index)
        tensor = self.result(probe_id).stored(out)
        if tensor is None and out.key is None:  # the worker stores dense tensors only
            raise Failure(f"{subject(want, index)} {value_text(out)} that is not a dense tensor")
        if tensor is None:
            where = f"output {index} of {probe_id}"
            raise Failure(malformed(f"{where} is not stored as described"), CheckStatus.error)
        if finite and not bool(torch.isfinite(tensor).all()):
            where = locate((~torch.isfinite(tensor)).double(), None)
            label = "the output" if want.container is None else f"output {index}"
            raise Failure(f"{label} holds {nonfinite_text(tensor)} (first at {where})")
        return tensor

    def gradient(self, probe_id: str, name: str) -> torch.Tensor | None:
        """The gradient of the probe's first call for `name` (`arg0`, `param:proj.weight`), or
        None if none reached it; a Failure when it is not shaped as the reference's."""
        got = self.result(probe_id).grad(0, name)
        want = self.reference(probe_id).grad(0, name)
        if got is None or want is None:
            return got
        if got.shape != want.shape or not got.is_floating_point():
            raise Failure(
                f"the gradient of {gradient_label(name)} is "
                f"{tensor_text(list(got.shape), dtype_text(got.dtype))}, expected "
                f"{tensor_text(list(want.shape), dtype_text(want.dtype))}"
            )
        return got

    def missing(self) -> Failure:
        """The error of a check whose probe has no result, with the reason why."""
        reason = why_missing(self.sub)
        return Failure(missing_text(reason, self.sub, self.spec), CheckStatus.error, reason)


def subject(want: CallResult, index: int) -> str:
    """How a message names output `index` of a call shaped like `want`."""
    return "returned" if want.container is None else f"output {index} is"


def unlike(got: TensorOut | ValueOut, want: CallResult, index: int) -> Failure:
    """Output `index` is not what the reference's call `want` has there."""
    return Failure(
        f"{subject(want, index)} {value_text(got)}, expected {value_text(want.outputs[index])}"
    )


def gradient_label(name: str) -> str:
    return "the input" if name.startswith("arg") else name.removeprefix("param:")


class Check(Generic[P]):
    """A reusable check of params `P`: a subclass names its params model once, as in
    `class Mine(Check[MyParams])`, and implements `prepare` and `judge`."""

    id: ClassVar[str]
    params_model: ClassVar[type[NoParams]] = NoParams
    """`P` at run time, taken from the class statement."""

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
