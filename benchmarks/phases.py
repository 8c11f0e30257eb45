"""Where a problem's child spends its time: the worker with a timer around each phase.

`grading_throughput.py --phases N` runs the local backend's worker through `launcher`, which
wraps the phases of `sandbox/child.py` before the worker starts: each child adds its seconds
per phase into memory shared with the worker, which reads them once the child is reaped and
writes every problem's totals to a JSON file when it ends. Benchmarking only: the timers sit
in the candidate's process, and nothing here is part of the grader.
"""

from __future__ import annotations

import importlib
import json
import mmap
import os
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

PHASES = ("fork", "load", "arm", "import", "probes", "guard", "guard, full", "records", "exit")
"""In order: the fork (until the child runs), loading the problem's part, setting the child up
and arming the guard, importing the candidate's files, the probes, the guard's check after each
(and its full check after the last), writing the records, and the exit (until the worker has
reaped the child)."""

LAUNCHER = """import sys
sys.path[:0] = [{root!r}, {here!r}]
from phases import run_worker
sys.exit(run_worker({out!r}))
"""

SLOTS = len(PHASES) + 2  # the phases, then the fork's start and the exit's start


def launcher(folder: Path) -> Path:
    """A worker entry in `folder` that writes each worker's phases to `folder`."""
    here = Path(__file__).resolve().parent
    path = folder / "worker.py"
    path.write_text(LAUNCHER.format(root=str(here.parent), here=str(here), out=str(folder)))
    return path


def read(folder: Path) -> list[dict[str, dict[str, float]]]:
    """Every worker's totals written to `folder`: problem -> phase -> seconds."""
    return [json.loads(p.read_text()) for p in sorted(folder.glob("phases-*.json"))]


class Clock:
    """Seconds per phase of the current child, in memory its worker shares."""

    def __init__(self) -> None:
        self.memory = mmap.mmap(-1, 8 * SLOTS)

    def get(self, slot: int) -> float:
        return float(struct.unpack_from("d", self.memory, 8 * slot)[0])

    def put(self, slot: int, value: float) -> None:
        struct.pack_into("d", self.memory, 8 * slot, value)

    def add(self, phase: str, seconds: float) -> None:
        slot = PHASES.index(phase)
        self.put(slot, self.get(slot) + seconds)

    def timed(self, phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.add(phase, time.perf_counter() - start)

        return wrapper

    def take(self) -> list[float]:
        values = [self.get(i) for i in range(len(PHASES))]
        for i in range(SLOTS):
            self.put(i, 0.0)
        return values


def instrument(clock: Clock, totals: dict[str, dict[str, float]]) -> None:
    """Wrap the phases of `sandbox.child` with `clock`, and add each child's into `totals`."""
    import sandbox.child as child
    from sandbox.folders import fresh_folder
    from sandbox.guard import GUARD
    from sandbox.processes import wait_child

    fork_slot, exit_slot = len(PHASES), len(PHASES) + 1

    def fork() -> int:
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            clock.add("fork", time.perf_counter() - start)
        else:
            clock.put(fork_slot, start)
        return pid

    def exit_child(code: int) -> None:
        clock.put(exit_slot, time.perf_counter())
        exit_original(code)

    def fresh(folder: Path) -> None:
        current[0] = folder.name
        fresh_original(folder)

    def waited(pid: int, timeout: float) -> tuple[int | None, int | None, bool]:
        ended = wait_original(pid, timeout)
        now = time.perf_counter()
        started, exited = clock.get(fork_slot), clock.get(exit_slot)
        if exited:
            clock.add("exit", now - exited)
        problem = totals.setdefault(current[0], {})
        for phase, seconds in zip((*PHASES, "child"), (*clock.take(), now - started), strict=True):
            problem[phase] = problem.get(phase, 0.0) + seconds
        return ended

    current = [""]
    exit_original, wait_original, fresh_original = child.exit_child, wait_child, fresh_folder
    replaced: dict[str, Any] = {
        "os": SimpleNamespace(**{**vars(os), "fork": fork}),
        "exit_child": exit_child,
        "wait_child": waited,
        "fresh_folder": fresh,
        "importlib": SimpleNamespace(import_module=clock.timed("import", importlib.import_module)),
    }
    phase_of = {
        "load_part": "load",
        "reset_inherited": "arm",
        "first_to_kill": "arm",
        "deny_exec": "arm",
        "run_probe": "probes",
        "append_record": "records",
        "json_bytes": "records",
        "write_bytes": "records",
    }
    replaced.update((name, clock.timed(p, getattr(child, name))) for name, p in phase_of.items())
    for name, value in replaced.items():
        setattr(child, name, value)
    check = {full: clock.timed("guard, full" if full else "guard", GUARD.check) for full in (0, 1)}
    for name, value in (
        ("arm", clock.timed("arm", GUARD.arm)),
        ("take_events", clock.timed("guard", GUARD.take_events)),
        ("check", lambda full: check[bool(full)](full)),
    ):
        setattr(GUARD, name, value)


def run_worker(out: str) -> int:
    """The worker, its children's phases timed; their totals written to `out` at its end. It
    warms up as a warm worker does, its heap then on huge pages (`collapse_heap`), which a
    worker of one submission leaves out."""
    import sandbox.worker as worker
    from sandbox.serve import collapse_heap, warm_up

    def warm_as_a_server() -> None:
        warm_up()
        collapse_heap()

    vars(worker)["warm_up"] = warm_as_a_server
    totals: dict[str, dict[str, float]] = {}
    instrument(Clock(), totals)
    code = worker.main()
    path = Path(out) / f"phases-{os.getpid()}-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(totals))
    return code


if __name__ == "__main__":
    sys.exit("run through `grading_throughput.py --phases N`")
