"""The seam between the grading pipeline and the place where submission code runs."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import Field

from grader.compat import StrEnum
from grader.strict import Strict


class ProblemLimits(Strict):
    """What one problem may use (a problem's `[limits]`): its own wall clock, and resources
    for the worker that runs it."""

    problem_seconds: float = Field(30.0, gt=0, description="Wall clock for one problem.")
    cpu_seconds: int = Field(120, gt=0)
    memory_mb: int = Field(
        3072,
        gt=0,
        description="Memory the candidate's code may use: the container's (docker), or address "
        "space over what the worker maps once torch is imported (local).",
    )
    file_size_mb: int = Field(64, gt=0, description="Largest file the worker may write.")
    output_mb: int = Field(128, gt=0, description="Size cap of the output directory.")
    tmpfs_mb: int = Field(64, gt=0)
    pids: int = Field(64, gt=0)
    cpus: float = Field(1.0, gt=0)
    log_bytes: int = Field(64_000, gt=0, description="Captured stdout/stderr kept per stream.")


class Limits(ProblemLimits):
    """Resource limits for one submission's worker (one process tree or one container): the
    problems' limits, and a wall clock for the whole worker."""

    wall_seconds: float = Field(120.0, gt=0, description="Wall clock for the whole worker.")


@dataclass(frozen=True)
class LimitOverrides:
    """Limits asked for by the person grading, over those of the problems' specs."""

    problem_seconds: float | None = None
    memory_mb: int | None = None
    wall_seconds: float | None = None


STARTUP_SECONDS = 60.0
"""Added to the problems' wall clocks for the worker's own start."""


def batch_limits(specs: Sequence[ProblemLimits], overrides: LimitOverrides | None = None) -> Limits:
    """One worker's limits for problems with these: the largest any asks for, the sum of
    their wall clocks."""
    overrides = overrides or LimitOverrides()
    merged = {field: max(getattr(s, field) for s in specs) for field in ProblemLimits.model_fields}
    merged.update({k: v for k, v in asdict(overrides).items() if v is not None})
    per_problem = merged["problem_seconds"]
    merged["wall_seconds"] = overrides.wall_seconds or (STARTUP_SECONDS + per_problem * len(specs))
    return Limits(**merged)


class BackendName(StrEnum):
    """Where submission code runs."""

    docker = "docker"  # the sandbox: containers of the sandbox image
    local = "local"  # a subprocess with rlimits, as the grader's user: NOT a security boundary
    fork = "fork"  # a fork of the grader's process, torch imported: one's own code only


class Isolation(StrEnum):
    """How submissions are kept apart: a container each, a warm worker's container serving one
    after another, or a local process (the local backend)."""

    container = "container"
    warm = "warm"
    process = "process"


STOPPED = "stopped: the batch was interrupted"
SANDBOX_ENV: dict[str, str] = {
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}
"""The worker's whole environment, in a container or a local process, but for its home and
temporary folder (and, locally, PATH)."""


@dataclass(frozen=True)
class WorkerJob:
    """One submission's run: `job` is the stream the worker reads on stdin
    (`grader/sandboxing/protocol.py`), `outputs` the names of the files it may send back. Setting
    `stop` ends the run at once."""

    submission_dir: Path
    job: bytes
    out_dir: Path
    limits: Limits
    outputs: frozenset[str] = frozenset()
    stop: threading.Event = field(default_factory=threading.Event)


@dataclass
class WorkerRun:
    """What the host learns about a finished worker, besides the files in `out_dir`."""

    exit_code: int | None
    timed_out: bool = False
    oom_killed: bool = False
    wall_seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""
    environment: dict[str, str] = field(default_factory=dict)  # this run's, e.g. its container
    fault: str | None = None  # set when the backend itself failed (a grader fault)
    output_error: str | None = None  # results rejected: over a cap, malformed or unsafe


def feed(write: Callable[[bytes], object], data: bytes, close: Callable[[], object]) -> None:
    """Write `data` to a child's stdin from a daemon thread, then close it."""

    def run() -> None:
        with contextlib.suppress(OSError, ValueError):  # ValueError: closed once the run ended
            try:
                write(data)
            finally:
                close()

    threading.Thread(target=run, daemon=True).start()


class Backend(Protocol):
    """Runs the worker (the `sandbox` package) on one submission and returns when it is done."""

    name: BackendName
    isolation: Isolation

    def describe(self) -> dict[str, str]:
        """Facts recorded in every report (backend name, image id, torch version...)."""
        ...

    def run(self, job: WorkerJob) -> WorkerRun: ...

    def close(self) -> None:
        """Release what the backend keeps between runs (warm containers)."""
        ...
