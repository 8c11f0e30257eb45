"""A fake backend, for tests of pure logic (sharding, merging, resuming, reports): it runs no
code and answers at once, as a worker whose every problem's process was killed (the candidate's
verdict, not a grader fault). Tests of features use the real engine and the real worker."""

from __future__ import annotations

import json
import platform
import signal

import torch

from grader.sandboxing.backends.base import BackendName, Isolation, WorkerJob, WorkerRun
from sandbox.protocol import PROTOCOL_VERSION, ProblemExit, WorkerReport


class FakeBackend:
    name = BackendName.local
    isolation = Isolation.process

    def __init__(self) -> None:
        self.runs = 0

    def describe(self) -> dict[str, str]:
        return {"backend": "fake"}

    def run(self, job: WorkerJob) -> WorkerRun:
        self.runs += 1
        report: WorkerReport = {
            "version": PROTOCOL_VERSION,
            "torch": torch.__version__,
            "python": platform.python_version(),
        }
        job.out_dir.mkdir(parents=True, exist_ok=True)
        (job.out_dir / "worker.json").write_text(json.dumps(report))
        killed: ProblemExit = {
            "exit_code": None,
            "signal": int(signal.SIGKILL),
            "timed_out": False,
            "seconds": 0.01,
            "stray_processes": 0,
        }
        for problem in sorted({n.split("/")[0] for n in job.outputs if "/" in n}):
            (job.out_dir / problem).mkdir(exist_ok=True)
            (job.out_dir / problem / "started").touch()
            (job.out_dir / problem / "exit.json").write_text(json.dumps(killed))
        return WorkerRun(exit_code=0)

    def close(self) -> None:
        pass
