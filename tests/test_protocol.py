"""The job stream: what the host encodes, the worker reads back, each problem in a memory file
of its own; and the result names the host accepts."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import UnionType
from typing import Union, get_args, get_origin, get_type_hints

import pytest
import torch
from pydantic import ValidationError
from safetensors.torch import save

import sandbox.protocol as worker_records
from grader.sandboxing import results
from grader.sandboxing.protocol import (
    SubmissionEnd,
    encode_job,
    encode_submission,
    problem_part,
    read_end,
    result_names,
)
from grader.strict import Strict
from sandbox.folders import restore, snapshot
from sandbox.protocol import (
    PROTOCOL_VERSION,
    Probe,
    ProbeData,
    ProblemJob,
    SubmissionFile,
    SubmissionHeader,
    sealer,
)
from sandbox.records import append_record, encode_tensors, load_part, read_job
from sandbox.serve import read_submission


def problem(name: str) -> ProblemJob:
    probe: Probe = {"id": "p0", "symbol": "f", "calls": []}
    return {"entry": f"{name}.py", "refuse": [], "key": "00" * 32, "probes": [probe]}


@contextlib.contextmanager
def piped(stream: bytes) -> Iterator[int]:
    """A pipe's read end, `stream` written to it from a thread, as the worker's stdin is."""
    read, write = os.pipe()

    def feed() -> None:
        with os.fdopen(write, "wb") as pipe:
            pipe.write(stream)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        yield read
    finally:
        writer.join()
        os.close(read)


def test_each_problem_arrives_in_a_memory_file_of_its_own() -> None:
    tensors = {"a": {"a/x": torch.arange(3.0)}, "b": {"b/x": torch.ones(2, 2)}}
    stream = encode_job((problem_part(n, 7, problem(n), tensors[n]) for n in ("a", "b")), {}, "job")
    with piped(stream) as read:
        parts = read_job(read)
    assert [(p.id, p.timeout) for p in parts] == [("a", 7.0), ("b", 7.0)]
    for part in parts:
        job, inputs = load_part(part.fd)
        os.close(part.fd)
        assert job == problem(part.id)
        assert inputs.keys() == tensors[part.id].keys()
        assert all(torch.equal(inputs[k], v) for k, v in tensors[part.id].items())


def test_a_short_job_stream_is_refused() -> None:
    stream = encode_job([problem_part("a", 7, problem("a"), {"a/x": torch.zeros(4)})], {}, "job")
    read, write = os.pipe()
    os.write(write, stream[:-3])
    os.close(write)
    with pytest.raises(EOFError):
        read_job(read)
    os.close(read)


def test_result_names_are_the_protocols_only() -> None:
    names = result_names(["split_heads"])
    files = ("started", "stdout.txt", "stderr.txt", "import.json", "results.bin", "exit.json")
    assert names == {"worker.json", *(f"split_heads/{n}" for n in files)}
    for unsafe in ("..", "a/b", ""):
        with pytest.raises(ValueError, match="unsafe result name"):
            result_names([unsafe])


def test_a_job_of_another_version_is_refused() -> None:
    stream = encode_job([problem_part("a", 7, problem("a"), {"a/x": torch.zeros(4)})], {}, "job")
    (size,) = struct.unpack("<Q", stream[:8])
    index = json.loads(stream[8 : 8 + size])
    assert index["version"] == PROTOCOL_VERSION
    other = json.dumps({**index, "version": PROTOCOL_VERSION - 1}).encode()
    read, write = os.pipe()
    os.write(write, struct.pack("<Q", len(other)) + other + stream[8 + size :])
    os.close(write)
    with pytest.raises(ValueError, match=f"job of protocol {PROTOCOL_VERSION - 1}, worker"):
        read_job(read)
    os.close(read)


def shape(hint: object) -> object:
    """A type with every class replaced by its name: the worker's records and the host's
    readers are different classes of the same names."""
    if isinstance(hint, type) and hint is not type(None):
        return hint.__name__
    args = get_args(hint)
    if not args:
        return hint
    origin = get_origin(hint)
    if origin in (Union, UnionType):
        return frozenset(shape(a) for a in args)
    return (origin, tuple(shape(a) for a in args))


RESULT_RECORDS = [
    model
    for model in vars(results).values()
    if isinstance(model, type) and issubclass(model, Strict) and model is not Strict
]


def test_every_result_record_has_a_strict_reader() -> None:
    records = {"Frame", "ErrorInfo", "TensorOut", "ValueOut", "TraceEntry", "CallResult"}
    records |= {"ParamInfo", "BufferInfo", "ModuleInfo", "InspectInfo", "Mismatch", "LoadInfo"}
    records |= {"ProbeData", "ImportStatus", "ProblemExit", "WorkerReport", "PolicyEvent"}
    records |= {"OpCount"}
    assert {m.__name__ for m in RESULT_RECORDS} == records


@pytest.mark.parametrize("model", [*RESULT_RECORDS, SubmissionEnd], ids=lambda m: m.__name__)
def test_the_hosts_reader_matches_the_workers_record(model: type[Strict]) -> None:
    """Field for field, the same names and types; what the host requires, the worker always
    writes."""
    record = getattr(worker_records, model.__name__)
    written = get_type_hints(record)
    read = get_type_hints(model)
    assert set(written) == set(model.model_fields)
    for name, field in model.model_fields.items():
        assert shape(read[name]) == shape(written[name]), name
        if field.is_required():
            assert name in record.__required_keys__, name


def test_a_warm_workers_submission_arrives_whole(tmp_path: Path) -> None:
    """The header the host writes is the worker's record, field for field; the files arrive
    as they were, each problem finds them so whatever an earlier one did, and the job stream
    follows."""
    source = tmp_path / "source"
    (source / "pkg").mkdir(parents=True)
    (source / "a.py").write_text("x = 1\n")
    (source / "pkg" / "b.py").write_bytes(b"\x00" * 70_000)
    (source / "link.py").symlink_to(source / "a.py")
    job = encode_job([problem_part("a", 7, problem("a"), {"a/x": torch.zeros(4)})], {}, "job")
    with piped(encode_submission(source, 12.5, job)) as read:
        submission = read_submission(read)
        parts = read_job(read)
        assert os.read(read, 1) == b""
    assert submission is not None
    header, files = submission
    assert set(header) == set(get_type_hints(SubmissionHeader))
    assert (header["version"], header["wall"]) == (PROTOCOL_VERSION, 12.5)
    assert [set(f) for f in header["files"]] == [set(get_type_hints(SubmissionFile))] * 2
    assert files == {Path("a.py"): b"x = 1\n", Path("pkg/b.py"): b"\x00" * 70_000}
    copy = tmp_path / "copy"
    restore(copy, files)
    assert snapshot(copy) == files
    # what a problem may do to the folder: the next one finds it as handed in
    (copy / "a.py").write_text("raise SystemExit\n")
    (copy / "planted.py").write_text("x = 2\n")
    (copy / "pkg" / "b.py").unlink()
    (copy / "pkg").chmod(0o500)
    restore(copy, files)
    assert snapshot(copy) == files
    shutil.rmtree(copy)
    copy.symlink_to(source)
    restore(copy, files)
    assert not copy.is_symlink() and snapshot(copy) == files
    assert [p.id for p in parts] == ["a"]
    for part in parts:
        os.close(part.fd)


def test_an_end_frame_is_read_strictly() -> None:
    ended: worker_records.SubmissionEnd = {
        "exit_code": 0, "signal": None, "timed_out": False, "seconds": 1.5, "oom_kills": None,
        "ipc_removed": 0, "leftovers": [], "state_changed": False, "retire": False,
    }  # fmt: skip
    assert read_end(json.dumps(ended).encode()).model_dump() == ended
    for bad in ({**ended, "extra": 1}, {**ended, "retire": "later"}, {"exit_code": 0}):
        with pytest.raises(ValidationError):
            read_end(json.dumps(bad).encode())


def test_a_record_holds_the_tensors_as_safetensors_saves_them(tmp_path: Path) -> None:
    """The worker reads tensors in place; the bytes are the library's own, every dtype."""
    tensors = {
        "empty": torch.empty(0, 3),
        "scalar": torch.tensor(3.5, dtype=torch.float64),
        "mask": torch.tensor([True, False]),
        "half": torch.randn(2, 3).bfloat16(),
        "fp8": torch.randn(3).to(torch.float8_e4m3fn),
        "index": torch.arange(4),
    }
    assert encode_tensors(tensors) == save(tensors)
    data: ProbeData = {
        "id": "p0",
        "error": None,
        "inspect": None,
        "load": None,
        "calls": [],
        "policy": [],
    }
    seal = sealer(b"k" * 32, "prob", "job")
    for index, probe in enumerate(("p0", "p1")):
        record: ProbeData = {**data, "id": probe}
        append_record(tmp_path / "results.bin", record, tensors, seal, index)
    written = list(results.records((tmp_path / "results.bin").read_bytes()))
    first = written[0][0]
    assert json.loads(first.body) == data and first.blob == save(tensors)
    assert [seal(str(i), r.sealed) == r.seal for i, (r, _) in enumerate(written)] == [True] * 2


def huge_pages_available() -> bool:
    release = tuple(int(part) for part in os.uname().release.split(".")[:2])
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    return release >= (6, 1) and thp.exists() and "[never]" not in thp.read_text()


@pytest.mark.skipif(not huge_pages_available(), reason="no MADV_COLLAPSE on this kernel")
def test_the_warm_heap_is_backed_by_huge_pages() -> None:
    """After the warm-up, torch's and Python's heap are mostly in 2 MiB pages (a fork then
    copies a page table entry per 2 MiB), and a forked child still runs torch."""
    code = (
        "import os, torch\n"
        "from sandbox.serve import collapse_heap\n"
        "collapsed = collapse_heap()\n"
        "huge = sum(int(line.split()[1]) for line in open('/proc/self/smaps')"
        " if line.startswith('AnonHugePages:')) << 10\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0 if torch.ones(3).sum().item() == 3 else 1)\n"
        "print(collapsed, huge, os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    collapsed, huge, child = (int(value) for value in done.stdout.split())
    assert collapsed >= 64 << 20 and huge >= collapsed // 2 and child == 0
