"""The job in and the records out: the index and parts read from the host's pipe, each record
appended sealed, and the submission's files kept and put back between problems.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import NamedTuple

import torch
from safetensors import TensorSpec, serialize
from safetensors.torch import load as load_tensors

from sandbox.folders import remove
from sandbox.protocol import (
    MAX_INDEX_BYTES,
    PROTOCOL_VERSION,
    RECORD_LENGTH,
    JobIndex,
    Json,
    ProbeData,
    ProblemJob,
    Seal,
)


class Part(NamedTuple):
    """One problem of the job: its id, its timeout, the memory file holding its part, the
    submission's files it may run, and the job's own name (which its seals hold for)."""

    id: str
    timeout: float
    fd: int
    scope: list[str]
    job: str


def read_job(fd: int) -> list[Part]:
    """Read the job stream from the pipe `fd` (see `grader/sandbox/protocol.py`): the index into
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
            str(index["job"]),
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


def append_record(
    path: Path, result: ProbeData, tensors: dict[str, torch.Tensor], seal: Seal, index: int
) -> None:
    """Append one probe's record, in one write: its JSON and its tensors, each after its u64
    length, then its seal (labelled with its index). A record cut short (the child killed while
    writing it) is the file's last."""
    body, blob = json_bytes(result), encode_tensors(tensors)
    record = b"".join((RECORD_LENGTH.pack(len(body)), body, RECORD_LENGTH.pack(len(blob)), blob))
    record += seal(str(index), record)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        while record:
            record = record[os.write(fd, record) :]
    finally:
        os.close(fd)


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


def json_bytes(data: object) -> bytes:
    """JSON as UTF-8, each lone surrogate of the candidate's text (an exception's message, a
    parameter's name) a `?`: JSON lets `\\ud800` through, the host's strict reader does not."""
    return json.dumps(data, ensure_ascii=False).encode("utf-8", "replace")


def write_json(path: Path, data: Json) -> None:
    write_bytes(path, json_bytes(data))


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
