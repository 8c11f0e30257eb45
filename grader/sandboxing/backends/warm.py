"""Warm workers: long-lived sandbox containers, each grading submissions one after another.

Each container has every option of `docker.py`'s (but no mount: the submission's files arrive on
stdin with the job) and runs the worker with `--serve K`: it imports torch once, then grades each
submission exactly as a throw-away container's worker would, each problem in a child of PID 1,
and sends its result stream in frames on stdout. Once the submission is done it kills every
other process of the container, empties /tmp, /dev/shm and /out, removes System V IPC objects
and checks that nothing is left and that nothing changed its own limits. A container that
crashed, timed out, hit its memory limit, left anything behind, broke the protocol or served K
submissions is replaced. The pool holds at most one container per concurrent run; given the
limits of the batch's runs, it starts them at once, while the host gets ready.
"""

from __future__ import annotations

import contextlib
import struct
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any

from pydantic import ValidationError

from grader.sandboxing.backends.base import (
    STOPPED,
    BackendName,
    Isolation,
    Limits,
    WorkerJob,
    WorkerRun,
)
from grader.sandboxing.backends.cleanup import POLL_SECONDS, Run, Stopped
from grader.sandboxing.backends.docker import (
    EXIT_SECONDS,
    IN_IMAGE,
    STARTUP_GRACE_SECONDS,
    SandboxImage,
    container_state,
    hardened_options,
    make_readable,
    start_container,
    wait_exit,
)
from grader.sandboxing.backends.drain import MIB, extract, stdout_cap
from grader.sandboxing.backends.streams import Streams
from grader.sandboxing.engine import DockerError
from grader.sandboxing.protocol import encode_submission, read_end
from grader.sandboxing.staging import MAX_TOTAL_BYTES

SERVE_COUNT = 200
"""Submissions one container grades before it is replaced."""
SEND_SECONDS = 30.0
"""Time allowed for a serving worker to take a submission's files and job off its stdin."""
READY_SECONDS = 120.0
"""Time allowed for a new container to start and import torch."""
FRAME = struct.Struct("<cI")
MAX_FRAME = 1 << 20


class ProtocolError(Exception):
    """The worker's frames are not what it should send."""


class Gone(Exception):
    """A container that had served before sent nothing for this submission: it had ended while
    idle (killed from outside, or by the host's OOM killer). The worker sends `worker.json`
    before any candidate code runs, so no frame at all means none ran. The submission goes to
    a fresh container, once: a fresh container's failure is the submission's."""


def serve_command(count: int) -> tuple[str, ...]:
    return (*IN_IMAGE, "--out", "/out", "--serve", str(count))


def container_key(limits: Limits) -> tuple[Any, ...]:
    """The limits a container is started with: runs that share them may share a container."""
    return tuple(getattr(limits, f) for f in ("memory_mb", "cpus", "pids", "tmpfs_mb"))


class Tail:
    """The last `keep` bytes of the container's stderr."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        del self.data[: max(0, len(self.data) - self.keep)]

    def since(self, offset: int) -> str:
        """What arrived after the first `offset` bytes, as far as it is still kept."""
        new = self.data[max(0, len(self.data) - (self.total - offset)) :]
        return new.decode("utf-8", errors="replace")


class Frames:
    """Reads the worker's frames from its stdout, each within a deadline; what arrives on its
    stderr meanwhile goes to `stderr`."""

    def __init__(self, streams: Streams, stderr: Tail) -> None:
        self.streams, self.stderr = streams, stderr
        self.buffer = bytearray()

    def ended(self) -> bool:
        """Whether the stream has already ended, without waiting (what arrived is kept)."""
        pieces = self.streams.read(0)
        if pieces is None:
            return True
        self._keep(pieces)
        return False

    def _keep(self, pieces: list[tuple[bool, bytes]]) -> None:
        for is_stdout, data in pieces:
            if is_stdout:
                self.buffer += data
            else:
                self.stderr.add(data)

    def _fill(self, size: int, deadline: float, stop: threading.Event) -> bool:
        while len(self.buffer) < size:
            if stop.is_set():
                raise Stopped
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            pieces = self.streams.read(min(left, 0.05))
            if pieces is None:
                return False
            self._keep(pieces)
        return True

    def next(self, deadline: float, stop: threading.Event) -> tuple[bytes, bytes] | None:
        """The next frame's kind and payload; None when the stream ended."""
        if not self._fill(FRAME.size, deadline, stop):
            return None
        kind, size = FRAME.unpack_from(self.buffer)
        if kind not in (b"R", b"D", b"E") or size > MAX_FRAME:
            raise ProtocolError(f"frame {kind!r} of {size} bytes")
        if not self._fill(FRAME.size + size, deadline, stop):
            return None
        payload = bytes(self.buffer[FRAME.size : FRAME.size + size])
        del self.buffer[: FRAME.size + size]
        return kind, payload


class WarmContainer:
    """One serving container of `run`: started at once (unless `stop` is set first), ready once
    its worker has imported torch."""

    def __init__(
        self, image: str, limits: Limits, count: int, run: Run, stop: threading.Event
    ) -> None:
        self.name = f"attention-grader-{uuid.uuid4().hex[:16]}"
        self.key = container_key(limits)
        self.run = run
        self.retired = False
        self.ready = False
        self.left = count
        # /tmp holds the submission's copy besides what the candidate may write there
        room = limits.tmpfs_mb + -(-MAX_TOTAL_BYTES // MIB)
        wider = limits.model_copy(update={"tmpfs_mb": room})
        options = hardened_options(wider, self.name, run.labels)
        try:
            self.container, self.streams = start_container(
                image, serve_command(count), options, run, stop
            )
        except DockerError:
            run.remove(self.name, stop)
            raise
        self.stderr = Tail(limits.log_bytes)
        self.frames = Frames(self.streams, self.stderr)

    def grade(self, job: WorkerJob) -> WorkerRun:
        """Grade one submission; the container is retired after anything but a clean run."""
        start = time.monotonic()
        logged = self.stderr.total
        with tempfile.TemporaryFile(prefix="grader-stdout-") as tar:
            try:
                run = self._grade(job, tar, start)
            except Stopped:
                self.retired = True
                return WorkerRun(exit_code=None, fault=STOPPED)
            except Gone:
                self.retired = True
                raise
            except (ProtocolError, OSError) as exc:
                self.retired = True
                run = WorkerRun(exit_code=None, fault=f"warm worker failed: {exc}")
            run.wall_seconds = time.monotonic() - start
            run.stderr = self.stderr.since(logged)
            if run.fault is None:
                extract(tar, job, run)
        return run

    def _grade(self, job: WorkerJob, tar: IO[bytes], start: float) -> WorkerRun:
        idle = self.ready
        if not self.ready:
            frame = self.frames.next(start + READY_SECONDS, job.stop)
            if frame is None or frame[0] != b"R":
                self.retired = True
                wait_exit(self.container, EXIT_SECONDS, self.run, job.stop)
                detail = self.stderr.since(0).strip()[-2000:]
                return WorkerRun(exit_code=None, fault=f"container did not start: {detail}")
            self.ready = True
            start = time.monotonic()
        stream = encode_submission(job.submission_dir, job.limits.wall_seconds, job.job)
        deadline = start + job.limits.wall_seconds + STARTUP_GRACE_SECONDS
        if idle and self.frames.ended():
            raise Gone  # the engine may stop reading a dead container's stdin without closing it
        try:
            # a live worker takes the submission at once: a stalled send is a dead container
            send_by = min(deadline, time.monotonic() + SEND_SECONDS)
            self.streams.send(stream, timeout=max(send_by - time.monotonic(), 0.1))
        except OSError as exc:
            if idle:
                raise Gone from exc
            raise
        cap, received, frames = stdout_cap(job.limits), 0, 0
        while True:
            try:
                frame = self.frames.next(deadline, job.stop)
            except TimeoutError:
                self.retired = True
                return WorkerRun(exit_code=None, timed_out=True)
            if frame is None and idle and frames == 0:
                raise Gone
            if frame is None:
                return self._died(job.stop)
            frames += 1
            kind, payload = frame
            if kind == b"E":
                return self._ended(payload)
            if kind != b"D":
                raise ProtocolError(f"unexpected frame {kind!r}")
            received += len(payload)
            if received > cap:
                self.retired = True
                return WorkerRun(exit_code=None, output_error=f"stdout exceeded {cap} bytes")
            tar.write(payload)

    def _ended(self, payload: bytes) -> WorkerRun:
        """The submission's end: every result has arrived before it. An end frame the host
        cannot read (what the candidate left may have shaped it) retires the container and
        leaves the results as they came."""
        self.left -= 1
        try:
            ended = read_end(payload)
        except ValidationError as exc:
            self.retired = True
            message = f"the worker's end frame was malformed: {exc.errors()[0]['msg']}"
            return WorkerRun(exit_code=None, output_error=message)
        self.retired = self.retired or ended.retire or self.left == 0
        return WorkerRun(
            exit_code=ended.exit_code,
            timed_out=ended.timed_out,
            oom_killed=bool(ended.oom_kills),
        )

    def _died(self, stop: threading.Event) -> WorkerRun:
        """The container ended in the middle of a submission (its worker killed or crashed)."""
        self.retired = True
        code = wait_exit(self.container, EXIT_SECONDS, self.run, stop)
        if stop.is_set():
            raise Stopped
        state = container_state(self.container, self.run, stop) or {}  # none: what came counts
        return WorkerRun(
            exit_code=state.get("ExitCode", code),
            oom_killed=bool(state.get("OOMKilled", False)),
        )

    def close(self, stop: threading.Event) -> None:
        """End the container at once and remove it (in the background once `stop` is set)."""
        self.streams.close()
        self.run.remove(self.name, stop)


class WarmBackend:
    """The Docker sandbox with warm workers: a pool of serving containers."""

    name = BackendName.docker
    isolation = Isolation.warm

    def __init__(
        self,
        image: str | None = None,
        serve_count: int = SERVE_COUNT,
        ready: Limits | None = None,
        workers: int = 1,
    ) -> None:
        """Given `ready` limits, `workers` containers are started at once with them, in the
        background (the engine's calls and their torch import overlap the host's own start);
        the first runs take them as they become ready."""
        self.sandbox = SandboxImage(image)
        self.image = self.sandbox.tag
        self.serve_count = serve_count
        self._idle: list[WarmContainer] = []
        self._starting: list[Future[WarmContainer]] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        if ready is not None and workers > 0:
            starter = ThreadPoolExecutor(max_workers=workers)
            self._starting = [
                starter.submit(self._new, ready, self._closing) for _ in range(workers)
            ]
            starter.shutdown(wait=False)

    def run(self, job: WorkerJob) -> WorkerRun:
        if job.stop.is_set():
            return WorkerRun(exit_code=None, fault=STOPPED)
        try:
            job.out_dir.mkdir(parents=True, exist_ok=True)
            make_readable(job.submission_dir)
            container = self._acquire(job)
        except OSError as exc:
            return WorkerRun(exit_code=None, fault=f"cannot start: {exc}")
        except DockerError as exc:
            return WorkerRun(exit_code=None, fault=STOPPED if job.stop.is_set() else str(exc))
        try:
            run = self._grade_on(container, job)
        except Gone:
            try:
                container = self._new(job.limits, job.stop)
            except DockerError as exc:
                fault = STOPPED if job.stop.is_set() else str(exc)
                return WorkerRun(exit_code=None, fault=fault)
            run = self._grade_on(container, job)
        run.environment = {"backend": self.name, "image": self.image, "container": container.name}
        return run

    def describe(self) -> dict[str, str]:
        return self.sandbox.describe(self.isolation)

    def _new(self, limits: Limits, stop: threading.Event) -> WarmContainer:
        return WarmContainer(self.image, limits, self.serve_count, self.sandbox.run, stop)

    def _grade_on(self, container: WarmContainer, job: WorkerJob) -> WorkerRun:
        try:
            return container.grade(job)
        finally:
            self._release(container, job.stop)

    def _acquire(self, job: WorkerJob) -> WarmContainer:
        """An idle container started with the job's limits, else one started ahead (once it is
        created), else a new one in place of another; `Stopped` when the job's batch stops
        first."""
        key = container_key(job.limits)
        with self._lock:
            match = next((c for c in self._idle if c.key == key), None)
            starting = self._starting.pop(0) if match is None and self._starting else None
            other = None if match or starting or not self._idle else self._idle[0]
            for taken in (match, other):
                if taken is not None:
                    self._idle.remove(taken)
        if match is not None:
            return match
        if starting is not None:
            started = self._started(starting, job.stop)
            if started.key == key:
                return started
            other = started
        if other is not None:
            other.close(job.stop)
        return self._new(job.limits, job.stop)

    def _started(self, starting: Future[WarmContainer], stop: threading.Event) -> WarmContainer:
        """The container started ahead, once created (`DockerError`: its start failed, as a
        new one's would); given back to the pool for `close` when `stop` comes first."""
        while True:
            try:
                return starting.result(timeout=POLL_SECONDS)
            except TimeoutError:
                if stop.is_set():
                    with self._lock:
                        self._starting.append(starting)
                    raise Stopped from None

    def _release(self, container: WarmContainer, stop: threading.Event) -> None:
        if container.retired:
            container.close(stop)
            return
        with self._lock:
            self._idle.append(container)

    def close(self) -> None:
        """End every idle container, and those started ahead that no run took (their starts
        abandoned), then remove whatever else carries the backend's label."""
        self._closing.set()
        with self._lock:
            idle, self._idle = self._idle, []
            starting, self._starting = self._starting, []
        for future in starting:
            with contextlib.suppress(DockerError):
                idle.append(future.result())
        for container in idle:
            container.close(self._closing)
        self.sandbox.run.sweep()
