"""What comes back from the worker, parsed strictly: the only form in which the host reads it.

Each model reads the worker's record of the same name (`sandbox/protocol.py`, where the
protocol is defined), field for field; `tests/test_protocol.py` holds them together.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Literal, NamedTuple, TypeVar

import torch
from pydantic import AfterValidator, Field, model_validator

from grader.sandboxing.capped import read_file_capped, read_log
from grader.sandboxing.ownmessage import Known, shown_message
from grader.sandboxing.owntext import own, own_names, own_shape, own_type
from grader.sandboxing.untrusted import (
    MAX_DIMS,
    MAX_JSON_BYTES,
    InvalidOutput,
    tensors_from,
    validated,
)
from grader.strict import Strict
from sandbox.policy import REFUSAL, Refused
from sandbox.protocol import RECORD_LENGTH, RESULTS_FILE, SEAL_BYTES, AttrValue, Probe, Seal

MAX_LOG_CHARS = 4_000
MAX_OUTPUTS = 16
MAX_PROBLEM_BYTES = 32_000_000
"""Bytes of a problem's results file read, all probes together."""
MAX_PROBLEM_JSON_BYTES = 1_000_000
"""Bytes of probe data (the records' JSON) read for one problem: 25 KB for the largest here."""
Dim = Annotated[int, Field(ge=0, lt=1 << 62)]
Shape = Annotated[list[Dim], Field(max_length=MAX_DIMS)]
DTYPES = {
    str(v).removeprefix("torch."): v for v in vars(torch).values() if isinstance(v, torch.dtype)
}
"""Every dtype torch defines, by the name the worker writes (`float32`, `float8_e4m3fn`)."""
DEVICES = {"cpu", "cuda", "meta", "mps", "xpu", "hpu", "mtia", "xla", "privateuseone"}
NO_FILES: Mapping[str, int] = MappingProxyType({})
REFUSED = "the grader's refusal of a forbidden call"  # a `Refused` raised by the guard
GPU_ASKED = re.compile(r"cuda|nvidia|\bgpus?\b", re.IGNORECASE)
"""An error's message that says the code asked for a GPU (torch's, without a CUDA device)."""
ON_CPU = (
    "; grading runs on the CPU, where your code sees no GPU: put tensors on the input's device "
    "(x.device), never 'cuda'"
)


def one_of(names: Collection[str], what: str) -> AfterValidator:
    """A string that must be one of `names`: anything else is a parse error, never text."""

    def check(value: str) -> str:
        if value not in names:
            raise ValueError(f"not {what}")
        return value

    return AfterValidator(check)


DtypeName = Annotated[str, one_of(DTYPES, "a torch dtype")]
DeviceName = Annotated[str, one_of(DEVICES, "a device type")]


class Frame(Strict):
    file: str = Field(max_length=500)
    line: int | None
    code: str = Field(max_length=400)


class ErrorInfo(Strict):
    stage: Literal["init", "inspect", "load", "setup", "call", "import"]
    call: int = Field(ge=0)
    type: str = Field(max_length=200)
    message: str = Field(max_length=4000)
    frames: list[Frame] = Field(max_length=16)

    def summary(self, files: Mapping[str, int] = NO_FILES, known: Known | None = None) -> str:
        """`ValueError: message at file:line `code``; in a candidate-facing view without the
        code (their code chose it), the message only as far as `known` bounds it
        (`shown_message`: none without `known`), and the place only where it is a line of one
        of `files` (the submission's Python files, by their number of lines). The guard's
        `Refused` reads as the grader's refusal, what it refused told to instructors only (as
        the forbidden API check tells it)."""
        code = f" `{self.frames[-1].code.strip()}`" if self.frames and self.frames[-1].code else ""
        message = self.message.strip().splitlines()[0][:300] if self.message.strip() else ""
        public = ""
        if self.type == Refused.__name__:
            kind, said = REFUSED, f" ({message.removesuffix(REFUSAL)})"
        else:
            kind, said = own_type(self.type, "an exception"), f": {message}"
            public = shown_message(message, known) if known is not None and message else ""
        on_cpu = ON_CPU if GPU_ASKED.search(self.message) else ""
        said = own(said, public and f": {public}")
        return kind + said + self.place(files) + own(code, "") + on_cpu

    def place(self, files: Mapping[str, int]) -> str:
        """` at file:line` of the last frame: to the candidate, only a line of one of `files`."""
        if not self.frames:
            return ""
        last = self.frames[-1]
        where = f" at {last.file}:{last.line}"
        if last.line is not None and 1 <= last.line <= files.get(last.file, 0):
            return where
        return own(where, "")


class TensorOut(Strict):
    kind: Literal["tensor"]
    key: str | None
    shape: Shape
    dtype: DtypeName
    device: DeviceName
    contiguous: bool
    requires_grad: bool

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]


class ValueOut(Strict):
    kind: Literal["value"]
    type: str = Field(max_length=200)
    repr: str = Field(max_length=400)


class TraceEntry(Strict):
    """A library call the candidate's code made; the SDPA fields are set for SDPA calls."""

    fn: str = Field(max_length=200)
    is_causal: bool | None = None
    dropout_p: float | None = None
    scale: float | None = None
    attn_mask: bool | None = None
    query_shape: Shape | None = None


class OpCount(Strict):
    """The operators one call ran (counted at torch's dispatcher): all of them, the products and
    the softmaxes (with the size of the largest); how often the candidate's code ran where the
    counter could not see it, and how often a tensor's values left torch."""

    all: int = Field(ge=0)
    products: int = Field(ge=0)
    softmaxes: int = Field(ge=0)
    largest: int = Field(ge=0, description="Elements of the largest of those softmaxes.")
    unseen: int = Field(ge=0)
    left: int = Field(ge=0, description="Calls that handed a tensor's values out of torch.")


class CallResult(Strict):
    outputs: list[TensorOut | ValueOut] = Field(max_length=MAX_OUTPUTS)
    container: str | None = Field(max_length=200)  # the tuple or list type returned, if any
    length: int = Field(ge=0)  # how many it returned: `outputs` describes the first MAX_OUTPUTS
    grads: dict[str, str | None]
    trace: list[TraceEntry] = Field(max_length=1000)
    ops: OpCount | None  # what the call ran, where the probe asked
    seconds: float

    @model_validator(mode="after")
    def _described(self) -> CallResult:
        single = self.container is None
        if (single and self.length != 1) or len(self.outputs) != min(self.length, MAX_OUTPUTS):
            raise ValueError(f"{len(self.outputs)} outputs described for {self.length} returned")
        return self


class ParamInfo(Strict):
    name: str
    shape: Shape
    dtype: DtypeName
    requires_grad: bool
    storage: int


class BufferInfo(Strict):
    name: str
    shape: Shape
    dtype: DtypeName
    persistent: bool


class ModuleInfo(Strict):
    name: str
    type: str
    instance: int


class InspectInfo(Strict):
    params: list[ParamInfo] = Field(max_length=10_000)
    buffers: list[BufferInfo] = Field(max_length=10_000)
    modules: list[ModuleInfo] = Field(max_length=10_000)
    tensor_attrs: list[str] = Field(max_length=10_000)
    dropouts: dict[str, float]
    attrs: dict[str, AttrValue]


class Mismatch(Strict):
    name: str
    expected: Shape
    got: Shape


class LoadInfo(Strict):
    missing: list[str]
    unexpected: list[str]
    mismatched: list[Mismatch]

    @property
    def ok(self) -> bool:
        return not (self.missing or self.unexpected or self.mismatched)

    def summary(self, known: Collection[str], sizes: Collection[int]) -> str:
        """What went wrong, the names the grader asked for (`nonconformity` holds them to it)
        in full; to the candidate, their module's other names only if `known` and its shapes
        by the `sizes` the grader knows (`own_names`, `own_shape`)."""
        parts = []
        if self.missing:
            parts.append("no parameter named " + ", ".join(self.missing))
        if self.unexpected:
            parts.append("unexpected parameter " + own_names(self.unexpected, known))
        for m in self.mismatched:
            got, expected = (own(str(tuple(s)), own_shape(s, sizes)) for s in (m.got, m.expected))
            parts.append(f"{m.name} has shape {got}, expected {expected}")
        return "; ".join(parts)

    def answers(self, asked: Collection[str]) -> bool:
        """Whether it names the weights `asked` for as loading them can: missing or mismatched
        ones among them, unexpected ones not."""
        named = [*self.missing, *(m.name for m in self.mismatched)]
        return all(n in asked for n in named) and not any(n in asked for n in self.unexpected)


class PolicyEvent(Strict):
    """A call the sandbox's policy guard refused, or a sign that it was tampered with."""

    kind: Literal["forbidden", "tampering"]
    what: str = Field(max_length=300)


Events = Annotated[list[PolicyEvent], Field(max_length=40)]


class ProbeData(Strict):
    id: str
    error: ErrorInfo | None
    inspect: InspectInfo | None
    load: LoadInfo | None
    calls: list[CallResult] = Field(max_length=64)
    policy: Events


class ImportStatus(Strict):
    import_error: ErrorInfo | None
    policy: Events


class ProblemExit(Strict):
    exit_code: int | None
    signal: int | None
    timed_out: bool
    seconds: float
    stray_processes: int = Field(0, ge=0, description="Left running after it; killed.")


class WorkerReport(Strict):
    version: int
    torch: str
    python: str


@dataclass
class ProbeResult:
    """A probe's data and its tensors."""

    data: ProbeData
    tensors: dict[str, torch.Tensor]

    def output(self, call: int = 0, index: int = 0) -> torch.Tensor | None:
        if call >= len(self.data.calls) or index >= len(self.data.calls[call].outputs):
            return None
        out = self.data.calls[call].outputs[index]
        return self.stored(out) if isinstance(out, TensorOut) else None

    def stored(self, out: TensorOut) -> torch.Tensor | None:
        """The tensor stored for an output, if there is one of the shape and dtype described."""
        tensor = self.tensors.get(out.key) if out.key is not None else None
        if tensor is None or [list(tensor.shape), tensor.dtype] != [out.shape, out.torch_dtype]:
            return None
        return tensor

    def grad(self, call: int, name: str) -> torch.Tensor | None:
        key = self.data.calls[call].grads.get(name)
        return None if key is None else self.tensors.get(key)


@dataclass
class ProblemRun:
    """Everything the worker produced for one problem of one submission."""

    problem: str
    exit: ProblemExit | None
    started: bool = False
    imported: bool = False  # the entry file finished importing
    import_error: ErrorInfo | None = None
    policy: list[PolicyEvent] = field(default_factory=list)  # the guard's, at import
    probes: dict[str, ProbeResult] = field(default_factory=dict)
    invalid: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""
    out_of_memory: bool = False  # SIGKILLed where the host saw its memory limit kill (not told)

    def killed_how(self) -> str:
        """How its process was killed, by the signal in its exit record."""
        assert self.exit is not None and self.exit.signal is not None
        if self.out_of_memory:
            return "killed at the memory limit that --memory-mb sets"
        return f"killed by signal {self.exit.signal}"


M = TypeVar("M", bound=Strict)


def read_model(path: Path, model: type[M]) -> M:
    """A model from a JSON file of at most `MAX_JSON_BYTES`."""
    raw, more = read_file_capped(path, MAX_JSON_BYTES)
    if more:
        raise InvalidOutput(f"{path.name}: over the limit of {MAX_JSON_BYTES} bytes")
    return validated(model, raw, path.name)


class Record(NamedTuple):
    """One record of a results file: what was sealed, its JSON, its safetensors, its seal."""

    sealed: bytes
    body: bytes
    blob: bytes
    seal: bytes


def records(data: bytes) -> Iterator[tuple[Record, int]]:
    """The complete records of a results file, each with where it ends: the JSON and the
    safetensors each after its u64 length, then the seal. A record cut short ends the file (its
    child was killed while writing it)."""
    at, size = 0, RECORD_LENGTH.size
    while at + size <= len(data):
        (length,) = RECORD_LENGTH.unpack_from(data, at)
        body_end = at + size + length
        if body_end + size > len(data):
            return
        (length,) = RECORD_LENGTH.unpack_from(data, body_end)
        blob_end = body_end + size + length
        end = blob_end + SEAL_BYTES
        if end > len(data):
            return
        body, blob = data[at + size : body_end], data[body_end + size : blob_end]
        yield Record(data[at:blob_end], body, blob, data[blob_end:end]), end
        at = end


def read_probe(body: bytes, blob: bytes, probes: Mapping[str, Probe], what: str) -> ProbeResult:
    """One record: the probe data must answer a probe asked for, its tensors must decode."""
    data = validated(ProbeData, body, what)
    probe = probes.get(data.id)
    if probe is None:
        raise InvalidOutput(f"{what}: holds probe {data.id[:40]!r}, not asked for")
    mismatch = nonconformity(data, probe)
    if mismatch is not None:
        raise InvalidOutput(f"{what} ({data.id}): {mismatch}")
    return ProbeResult(data, tensors_from(blob, f"{what} ({data.id})"))


def problem_log(path: Path) -> str:
    return read_log(path, MAX_LOG_CHARS) if path.exists() else ""


def read_worker_report(out_dir: Path) -> WorkerReport | None:
    path = out_dir / "worker.json"
    if not path.is_file():
        return None
    return read_model(path, WorkerReport)


def nonconformity(data: ProbeData, probe: Probe) -> str | None:
    """How a probe's result fails to answer the request (calls, inspection, weights), or None."""
    asked = len(probe["calls"])
    if data.error is not None:
        if data.error.call != len(data.calls) or len(data.calls) > asked:
            return f"an error at call {data.error.call} after {len(data.calls)} of {asked} calls"
        return None
    if len(data.calls) != asked:
        return f"{len(data.calls)} calls, {asked} asked for"
    if (data.inspect is None) != (probe.get("inspect") is None):
        return "inspection missing or not asked for"
    if (data.load is None) != (probe.get("weights") is None):
        return "weight loading missing or not asked for"
    if data.load is not None and not data.load.answers(probe.get("weights") or {}):
        return "weight loading that names other parameters than asked for"
    return None


def read_problem(
    out_dir: Path, problem: str, probes: Mapping[str, Probe], seal: Seal
) -> ProblemRun:
    """Read one problem's folder (`probes`: id -> the probe asked for; `seal`: the problem's
    sealer, under the job's key); files that are missing, malformed, not sealed with the key
    or over the problem's byte budget are noted, never trusted."""
    run = ProblemRun(problem=problem, exit=None)
    folder = out_dir / problem
    if not folder.is_dir():
        return run
    run.started = (folder / "started").is_file()
    run.stdout = problem_log(folder / "stdout.txt")
    run.stderr = problem_log(folder / "stderr.txt")
    if (folder / "exit.json").is_file():
        try:
            run.exit = read_model(folder / "exit.json", ProblemExit)
        except InvalidOutput as exc:
            run.invalid.append(str(exc))
    status_path = folder / "import.json"
    if status_path.is_file():
        try:
            status = read_status(status_path, seal)
            run.import_error, run.policy = status.import_error, status.policy
            run.imported = run.import_error is None
        except InvalidOutput as exc:
            run.invalid.append(str(exc))
    path = folder / RESULTS_FILE
    if not path.is_file():
        return run
    data, more = read_file_capped(path, MAX_PROBLEM_BYTES)
    if more:
        run.invalid.append(f"results over {MAX_PROBLEM_BYTES} bytes")
    read_records(data, probes, run, not more, seal)
    return run


def read_status(path: Path, seal: Seal) -> ImportStatus:
    """A problem's import status: its seal (hex), a newline, then its JSON."""
    raw, more = read_file_capped(path, MAX_JSON_BYTES)
    if more:
        raise InvalidOutput(f"{path.name}: over the limit of {MAX_JSON_BYTES} bytes")
    given, _, encoded = raw.partition(b"\n")
    if not hmac.compare_digest(given, seal("import", encoded).hex().encode()):
        raise InvalidOutput(f"{path.name}: {UNSEALED}")
    return validated(ImportStatus, encoded, path.name)


UNSEALED = "not sealed by the grader's worker (the candidate's process wrote or changed it)"


def read_records(
    data: bytes, probes: Mapping[str, Probe], run: ProblemRun, whole: bool, seal: Seal
) -> None:
    """Read a results file's records into `run`: at most one per probe asked, at most
    `MAX_PROBLEM_JSON_BYTES` of probe data, each probe once, each sealed under the job's key
    with its index; what breaks a rule is noted and ends the reading. Bytes after the last whole
    record of a `whole` file are noted when the child exited 0 (it was not killed while
    writing)."""
    json_bytes = last = 0
    for index, (record, end) in enumerate(records(data)):
        what = f"{RESULTS_FILE} record {index + 1}"
        body, blob = record.body, record.blob
        json_bytes, last = json_bytes + len(body), end
        if not hmac.compare_digest(record.seal, seal(str(index), record.sealed)):
            run.invalid.append(f"{what}: {UNSEALED}")
            return
        if index >= len(probes):
            run.invalid.append(f"{what}: over the limit of {len(probes)} records")
            return
        if json_bytes > MAX_PROBLEM_JSON_BYTES:
            run.invalid.append(f"{what}: over the limit of its probe data")
            return
        try:
            probe = read_probe(body, blob, probes, what)
            if probe.data.id in run.probes:
                raise InvalidOutput(f"{what}: a second record of {probe.data.id}")
            run.probes[probe.data.id] = probe
        except InvalidOutput as exc:
            run.invalid.append(str(exc))
    if whole and last < len(data) and run.exit is not None and run.exit.exit_code == 0:
        run.invalid.append(f"{RESULTS_FILE}: {len(data) - last} bytes after its last whole record")
