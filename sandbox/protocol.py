"""The protocol: every record that crosses the trust boundary, defined once, both ways.

The host writes the job records (`grader/sandboxing/protocol.py`, `grader/verdict/plan.py`) and
reads the result records with strict pydantic models of the same names
(`grader/sandboxing/results.py`), which a test holds field for field to these. Standard library
only: the host imports it without torch or the executor.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypedDict, final

PROTOCOL_VERSION = 10
RESULTS_FILE = "results.bin"
RECORD_LENGTH = struct.Struct("<Q")
MAX_INDEX_BYTES = 1 << 20


Json = Any
Scalar = bool | int | float | str | None
AttrValue = Scalar | dict[str, Scalar]  # an attribute as `read_attr` shows it
Namespace = dict[str, Any]
Stage = Literal["init", "inspect", "load", "setup", "call", "import"]
Mode = Literal["host", "sandbox"]
"""Where a probe runs: "host" for the grader's trusted reference (an interrupt propagates),
"sandbox" for a candidate's code (every exception is theirs, and described)."""


# -- the job: host to worker


class IndexEntry(TypedDict):
    id: str
    timeout: float
    size: int  # bytes of the problem's part in the stream
    scope: list[str]  # the submission's files the problem may run: its entry and what it imports


class JobIndex(TypedDict):
    version: int  # PROTOCOL_VERSION: a worker refuses a job of any other
    job: str  # this run of this submission's: its records' seals hold for it alone
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
    """The operators one call ran: all of them, the products among them and the softmaxes
    (`PRODUCTS`, `SOFTMAXES`); and the calls that handed its values out of torch (`LEAVING`)."""

    all: int
    products: int
    softmaxes: int
    largest: int  # the elements of the largest of those softmaxes (heads at once, or one)
    unseen: int  # calls of the candidate's code outside the counter's sight
    left: int  # calls that handed a tensor's values to Python or NumPy


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


FAMILIES = ("multi_head_attention", "scaled_dot_product_attention")
ATTENTION = re.compile(r"attention|sdpa|_sdp|transformer|multi_?head", re.IGNORECASE)
"""Names of the attention families: torch's operators, Python functions and modules."""
MULTI_HEAD = re.compile(r"multi_?head|transformer", re.IGNORECASE)


def family_of(name: str) -> str | None:
    """The attention family a name belongs to (an operator, a function, a module), if any."""
    if not ATTENTION.search(name):
        return None
    return FAMILIES[0] if MULTI_HEAD.search(name) else FAMILIES[1]


Seal = Callable[[str, bytes], bytes]
"""A problem's sealer: the HMAC-SHA256, under the job's key, of a labelled record."""
SEAL_BYTES = 32


def sealer(key: bytes, problem: str, job: str) -> Seal:
    """The seal of `problem`'s records in one `job` (a run of one submission): only a holder of
    the key (the worker's code, the host) makes one, so a record the candidate's code wrote or
    rewrote, or brought from another submission's run, is known for what it is."""

    def seal(label: str, data: bytes) -> bytes:
        named = f"{job}\0{problem}/{label}\0".encode()
        return hmac.new(key, named + data, hashlib.sha256).digest()

    return seal


Files = dict[Path, bytes]
"""A submission's files by their path in its folder."""
