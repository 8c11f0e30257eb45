"""The job stream: what the host encodes, the worker reads back, each problem in a memory file
of its own; and the result names the host accepts."""

from __future__ import annotations

import importlib.util
import os
import threading
from types import ModuleType

import pytest
import torch

from grader.courses.paths import WORKER_FILE
from grader.sandbox.protocol import encode_job, problem_part, result_names


def sandbox_worker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sandbox_worker", WORKER_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def problem(name: str) -> dict[str, object]:
    return {"id": name, "entry": f"{name}.py", "timeout": 7, "traces": [], "probes": [{"id": "p0"}]}


def test_each_problem_arrives_in_a_memory_file_of_its_own() -> None:
    worker = sandbox_worker()
    tensors = {"a": {"a/x": torch.arange(3.0)}, "b": {"b/x": torch.ones(2, 2)}}
    stream = encode_job(problem_part(problem(n), tensors[n]) for n in ("a", "b"))
    read, write = os.pipe()

    def feed() -> None:
        with os.fdopen(write, "wb") as pipe:
            pipe.write(stream)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        parts = worker.read_job(read)
    finally:
        writer.join()
        os.close(read)
    assert [(p.id, p.timeout) for p in parts] == [("a", 7.0), ("b", 7.0)]
    for part in parts:
        job, inputs = worker.load_part(part.fd)
        os.close(part.fd)
        assert job == {"entry": f"{part.id}.py", "traces": [], "probes": [{"id": "p0"}]}
        assert inputs.keys() == tensors[part.id].keys()
        assert all(torch.equal(inputs[k], v) for k, v in tensors[part.id].items())


def test_a_short_job_stream_is_refused() -> None:
    worker = sandbox_worker()
    stream = encode_job([problem_part(problem("a"), {"a/x": torch.zeros(4)})])
    read, write = os.pipe()
    os.write(write, stream[:-3])
    os.close(write)
    with pytest.raises(EOFError):
        worker.read_job(read)
    os.close(read)


def test_result_names_are_the_protocols_only() -> None:
    names = result_names({"split_heads": ["p0"]})
    assert names == {
        "worker.json",
        *(
            f"split_heads/{n}"
            for n in ("started", "stdout.txt", "stderr.txt", "import.json", "exit.json")
        ),
        "split_heads/p0.json",
        "split_heads/p0.safetensors",
    }
    for unsafe in ({"..": ["p0"]}, {"a/b": ["p0"]}, {"a": ["../p0"]}):
        with pytest.raises(ValueError, match="unsafe result name"):
            result_names(unsafe)
