"""The host reads worker output strictly: malformed or oversized files are never trusted."""

from __future__ import annotations

import json
import shutil
import struct
import time
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import save

from grader.sandboxing import results
from grader.sandboxing.results import UNSEALED, read_problem
from sandbox.protocol import RESULTS_FILE, Call, Probe, Seal, sealer


def asked(probe_id: str = "p0", calls: int = 0, **extra: Any) -> Probe:
    """A probe asking for `calls` calls (and, in `extra`, an inspection or weights)."""
    probe: Probe = {"id": probe_id, "symbol": "f", "calls": [NO_ARGS] * calls}
    probe.update(extra)  # type: ignore[typeddict-item]
    return probe


NO_ARGS: Call = {"args": [], "kwargs": {}}
ASKED = {"p0": asked("p0"), "p1": asked("p1")}


def probe_json(probe_id: str = "p0", **extra: object) -> str:
    data = {
        "id": probe_id,
        "error": None,
        "inspect": None,
        "load": None,
        "calls": [],
        "policy": [],
        **extra,
    }
    return json.dumps(data)


EMPTY = save({})


KEY = bytes(range(32))
SEAL = sealer(KEY, "prob", "job")


def record(body: str | bytes, tensors: bytes = EMPTY, index: int = 0, seal: Seal = SEAL) -> bytes:
    """The `index`-th record of a results file, as the worker appends it (sealed with `seal`)."""
    raw = body.encode() if isinstance(body, str) else body
    data = b"".join((struct.pack("<Q", len(raw)), raw, struct.pack("<Q", len(tensors)), tensors))
    return data + seal(str(index), data)


def write_results(root: Path, *records: bytes) -> None:
    (root / "prob").mkdir()
    (root / "prob" / RESULTS_FILE).write_bytes(b"".join(records))


def test_well_formed_probe_is_read(tmp_path: Path) -> None:
    write_results(tmp_path, record(probe_json(), save({"t": torch.ones(2)})))
    run = read_problem(tmp_path, "prob", {"p0": ASKED["p0"]}, SEAL)
    assert list(run.probes) == ["p0"] and not run.invalid
    assert run.probes["p0"].tensors["t"].tolist() == [1.0, 1.0]


def test_extra_field_is_rejected(tmp_path: Path) -> None:
    write_results(tmp_path, record(probe_json(verdict="passed")))
    run = read_problem(tmp_path, "prob", {"p0": ASKED["p0"]}, SEAL)
    assert not run.probes and "verdict" in run.invalid[0]


def test_a_probe_not_asked_for_or_answered_twice_is_rejected(tmp_path: Path) -> None:
    write_results(
        tmp_path, *(record(probe_json(i), index=n) for n, i in enumerate(("p2", "p0", "p0")))
    )
    run = read_problem(
        tmp_path, "prob", {"p0": ASKED["p0"], "p1": ASKED["p1"], "p3": asked("p3")}, SEAL
    )
    assert list(run.probes) == ["p0"]
    assert "holds probe 'p2'" in run.invalid[0]
    assert run.invalid[1] == f"{RESULTS_FILE} record 3: a second record of p0"


def test_records_past_the_probes_asked_are_not_read(tmp_path: Path) -> None:
    """A hostile file of empty records, sealed or not: reading stops after one record per
    probe, or at the first record that is not sealed."""
    junk = b"".join(record("", EMPTY, index) for index in range(1, 40_000))
    for tail, reason in ((junk, "record 3: over the limit of 2 records"), (b"\0" * 800_000, "")):
        write_results(tmp_path, record(probe_json("p0")), tail)
        start = time.thread_time()
        run = read_problem(tmp_path, "prob", ASKED, SEAL)
        assert time.thread_time() - start < 0.5
        assert list(run.probes) == ["p0"] and len(run.invalid) == 2 - (not reason), run.invalid
        assert run.invalid[-1].endswith(reason or "record 2: " + UNSEALED), run.invalid
        shutil.rmtree(tmp_path / "prob")


def test_probe_data_has_a_budget_and_many_errors_are_counted(tmp_path: Path) -> None:
    """Each of 40000 bad attributes makes errors of pydantic's: they are counted, not listed."""
    inspect: dict[str, Any] = {"params": [], "buffers": [], "modules": []}
    inspect.update(tensor_attrs=[], dropouts={})
    attrs: dict[str, list[int]] = {str(i): [] for i in range(40_000)}
    many_errors = record(probe_json(inspect={**inspect, "attrs": attrs}))
    write_results(tmp_path, many_errors, record(" " * results.MAX_PROBLEM_JSON_BYTES, index=1))
    run = read_problem(tmp_path, "prob", ASKED, SEAL)
    assert run.invalid[0].startswith(f"{RESULTS_FILE} record 1: ")
    assert run.invalid[0].endswith("0 validation errors for ProbeData")
    assert run.invalid[1] == f"{RESULTS_FILE} record 2: over the limit of its probe data"


@pytest.mark.parametrize(("dim", "read"), [(3, True), (10**2000, False)])
def test_a_shape_is_bounded(tmp_path: Path, dim: int, read: bool) -> None:
    """A 2000-digit dimension would be read by JSON and break later arithmetic."""
    out = {"kind": "tensor", "key": None, "dtype": "float32", "device": "cpu"}
    tensor = {**out, "shape": [dim], "contiguous": True, "requires_grad": False}
    call = {**CALL, "outputs": [tensor], "length": 1, "container": None}
    write_results(tmp_path, record(probe_json(calls=[call])))
    run = read_problem(tmp_path, "prob", {"p0": asked(calls=1)}, SEAL)
    assert bool(run.probes) is read and bool(run.invalid) is not read


def test_garbage_tensors_are_rejected(tmp_path: Path) -> None:
    write_results(tmp_path, record(probe_json("p1"), b"\x00pickle\x80\x04"))
    run = read_problem(tmp_path, "prob", ASKED, SEAL)
    assert not run.probes and len(run.invalid) == 1


def test_bytes_after_the_last_record_of_a_clean_exit_are_noted(tmp_path: Path) -> None:
    """A child that exited 0 was not killed while writing: what follows is not a record."""
    whole = record(probe_json("p0"))
    write_results(tmp_path, b"\xff" * 8, whole)
    exit_json = {"exit_code": 0, "signal": None, "timed_out": False, "seconds": 0.1}
    (tmp_path / "prob" / "exit.json").write_text(json.dumps(exit_json))
    run = read_problem(tmp_path, "prob", ASKED, SEAL)
    assert not run.probes
    assert run.invalid == [f"{RESULTS_FILE}: {8 + len(whole)} bytes after its last whole record"]


def test_a_record_cut_short_is_the_files_end(tmp_path: Path) -> None:
    """The child killed while appending a record: the records before it are read."""
    whole = record(probe_json("p1"), index=1)
    write_results(tmp_path, record(probe_json("p0")), whole[: len(whole) - 3])
    run = read_problem(tmp_path, "prob", ASKED, SEAL)
    assert list(run.probes) == ["p0"] and not run.invalid


def test_logs_are_capped(tmp_path: Path) -> None:
    (tmp_path / "prob").mkdir()
    (tmp_path / "prob" / "stdout.txt").write_text("x" * 100_000)
    run = read_problem(tmp_path, "prob", {}, SEAL)
    assert len(run.stdout) < results.MAX_LOG_CHARS + 100
    assert run.stdout.endswith("[... truncated]")


def test_json_nested_too_deep_is_malformed(tmp_path: Path) -> None:
    write_results(tmp_path, record("[" * 100_000 + "]" * 100_000))
    run = read_problem(tmp_path, "prob", {"p0": ASKED["p0"]}, SEAL)
    assert not run.probes and run.invalid == [f"{RESULTS_FILE} record 1: JSON nested too deeply"]


def test_outputs_must_match_what_was_returned(tmp_path: Path) -> None:
    call: dict[str, Any] = {"outputs": [], "grads": {}, "trace": [], "ops": None, "seconds": 0.0}
    answers: list[bytes] = []
    for probe_id, (container, length) in {"p0": (None, 1), "p1": ("tuple", 20)}.items():
        returned = {**call, "container": container, "length": length}
        answers.append(record(probe_json(probe_id, calls=[returned]), index=len(answers)))
    write_results(tmp_path, *answers)
    one_call = {probe_id: asked(probe_id, calls=1) for probe_id in ("p0", "p1")}
    run = read_problem(tmp_path, "prob", one_call, SEAL)
    assert not run.probes and len(run.invalid) == 2
    assert all("asked for" not in message for message in run.invalid), run.invalid


CALL: dict[str, Any] = {
    "outputs": [],
    "grads": {},
    "trace": [],
    "ops": None,
    "seconds": 0.0,
    "container": "tuple",
    "length": 0,
}
ERROR = {"stage": "call", "call": 1, "type": "ValueError", "message": "", "frames": []}


@pytest.mark.parametrize(
    ("probe", "answer", "message"),
    [
        (asked(calls=2), {"calls": [CALL]}, "1 calls, 2 asked for"),
        (asked(calls=0), {"calls": [CALL]}, "1 calls, 0 asked for"),
        (asked(calls=1), {"calls": [], "error": ERROR}, "an error at call 1 after 0"),
        (asked(calls=1, inspect=[]), {"calls": [CALL]}, "inspection missing"),
        (asked(calls=1, weights={}), {"calls": [CALL]}, "weight loading missing"),
    ],
)
def test_results_that_do_not_answer_the_probe_are_rejected(
    tmp_path: Path, probe: Probe, answer: dict[str, Any], message: str
) -> None:
    write_results(tmp_path, record(probe_json(**answer)))
    run = read_problem(tmp_path, "prob", {"p0": probe}, SEAL)
    assert not run.probes and message in run.invalid[0]


def test_an_error_after_the_calls_that_finished_is_read(tmp_path: Path) -> None:
    write_results(tmp_path, record(probe_json(calls=[CALL], error=ERROR)))
    run = read_problem(tmp_path, "prob", {"p0": asked(calls=2)}, SEAL)
    assert list(run.probes) == ["p0"] and not run.invalid


def test_a_problems_results_have_a_byte_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_results(tmp_path, *(record(probe_json(p), index=n) for n, p in enumerate(ASKED)))
    budget = len(record(probe_json("p0"))) + 1
    monkeypatch.setattr(results, "MAX_PROBLEM_BYTES", budget)
    run = read_problem(tmp_path, "prob", ASKED, SEAL)
    assert list(run.probes) == ["p0"]
    assert run.invalid == [f"results over {budget} bytes"]
