"""The host's side of the worker's protocol: the job stream the worker reads on its stdin, the
names of the result files it may send back, and a warm worker's per-submission records.

The job stream is an index, then one part per problem in the index's order:

    u64 (little-endian) n, then n bytes of the index JSON (`JobIndex`):
        {"version": PROTOCOL_VERSION,
         "problems": [{"id": ..., "timeout": ..., "size": ..., "scope": [files]}]}
    per problem, `size` bytes: u64 m, m bytes of the problem's JSON (`ProblemJob`: entry, the
        families it refuses, its probes), then the safetensors file of every tensor its probes
        name

Every record is defined once, in the worker (`sandbox/protocol.py`).

The worker keeps each part in a memory file of its own, so that a problem's child gets its own
probes and tensors and nothing of the other problems'.

A warm worker (`--serve`) reads, per submission, u64 n, n bytes of a header JSON
(`SubmissionHeader`: version, wall clock, each file's name and size), the files' bytes in that
order, then the job stream; once it is done it sends an end frame (`SubmissionEnd`).
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import torch
from pydantic import Field
from safetensors.torch import save

from grader.strict import Strict
from sandbox.protocol import (
    PROTOCOL_VERSION,
    IndexEntry,
    JobIndex,
    ProblemJob,
    SubmissionFile,
    SubmissionHeader,
)
from sandbox.stream import RESULT_FILES

PROBLEM_FILES = ("started", *RESULT_FILES)
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class ProblemPart:
    """One problem's share of a job: what its child in the sandbox gets, and nothing more."""

    id: str
    timeout: float
    data: bytes


def problem_part(
    problem: str, timeout: float, job: ProblemJob, tensors: Mapping[str, torch.Tensor]
) -> ProblemPart:
    """A problem's part: `job` is its plan's `job()`, `tensors` every tensor its probes name."""
    probes = json.dumps(job).encode()
    blob = save({k: v.contiguous() for k, v in tensors.items()})
    data = struct.pack("<Q", len(probes)) + probes + blob
    return ProblemPart(problem, float(timeout), data)


def encode_job(parts: Iterable[ProblemPart], scopes: Mapping[str, list[str]], job: str) -> bytes:
    """The job stream for these problems, in this order; `scopes`: each problem's files of the
    submission (its entry file and what it imports), the only ones its child may run; `job`:
    this run's own name, which every record's seal holds for."""
    parts = list(parts)
    problems: list[IndexEntry] = [
        {"id": p.id, "timeout": p.timeout, "size": len(p.data), "scope": scopes.get(p.id, [])}
        for p in parts
    ]
    index: JobIndex = {"version": PROTOCOL_VERSION, "job": job, "problems": problems}
    encoded = json.dumps(index).encode()
    return b"".join([struct.pack("<Q", len(encoded)), encoded, *(p.data for p in parts)])


def encode_submission(root: Path, wall_seconds: float, job: bytes) -> bytes:
    """What a warm worker reads for one submission: its header, the files under `root`
    (symbolic links left out), then the job stream."""
    paths = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    contents = [p.read_bytes() for p in paths]
    files: list[SubmissionFile] = [
        {"name": str(p.relative_to(root)), "size": len(c)}
        for p, c in zip(paths, contents, strict=True)
    ]
    header: SubmissionHeader = {"version": PROTOCOL_VERSION, "wall": wall_seconds, "files": files}
    encoded = json.dumps(header).encode()
    return b"".join([struct.pack("<Q", len(encoded)), encoded, *contents, job])


class SubmissionEnd(Strict):
    """How a warm worker's submission ended, read from its end frame."""

    exit_code: int | None
    signal: int | None
    timed_out: bool
    seconds: float
    oom_kills: int | None
    ipc_removed: int
    leftovers: list[str] = Field(max_length=20)
    state_changed: bool
    retire: bool


def read_end(payload: bytes) -> SubmissionEnd:
    """An end frame's record (`pydantic.ValidationError` if it is not one)."""
    return SubmissionEnd.model_validate_json(payload)


def result_names(problems: Iterable[str]) -> frozenset[str]:
    """Every file the worker may send for these problems."""
    names = {"worker.json"}
    for problem in problems:
        if not _SAFE_NAME.match(problem):
            raise ValueError(f"unsafe result name {problem!r}")
        names.update(f"{problem}/{name}" for name in PROBLEM_FILES)
    return frozenset(names)
