"""Warm workers: long-lived sandbox containers, each grading submissions one after another.

Each container has every flag of `docker.py`'s (but no mount: the submission's files arrive on
stdin with the job) and runs `worker.py --serve K`: it imports torch once, then for each
submission forks a child that grades it exactly as a throw-away container's worker would, and
relays its result stream in frames on stdout. Once the child is done the worker kills every
other process of the container, empties /tmp, /dev/shm and /out, removes System V IPC objects
and checks that nothing is left and that nothing changed its own limits. A container that
crashed, timed out, hit its memory limit, left anything behind, broke the protocol or served K
submissions is replaced. The pool holds at most one container per concurrent run.
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import subprocess
import tempfile
import threading
import time
import uuid
from typing import IO, Any

from pydantic import ValidationError

from grader.sandbox.backends import cleanup
from grader.sandbox.backends.base import STOPPED, Isolation, Limits, WorkerJob, WorkerRun
from grader.sandbox.backends.docker import (
    STARTUP_GRACE_SECONDS,
    DockerBackend,
    container_state,
    end_container,
    extract,
    hardened_arguments,
    make_readable,
    stdout_cap,
)
from grader.sandbox.engine import docker, docker_binary
from grader.sandbox.protocol import encode_submission, read_end

SERVE_COUNT = 50
"""Submissions one container grades before it is replaced."""
READY_SECONDS = 120.0
"""Time allowed for a new container to start and import torch."""
FRAME = struct.Struct("<cI")
MAX_FRAME = 1 << 20
_CHUNK = 1 << 16


class ProtocolError(Exception):
    """The worker's frames are not what it should send."""


class Stopped(Exception):
    """The batch was interrupted."""


def serve_command(count: int) -> tuple[str, ...]:
    return ("python3", "/opt/worker/worker.py", "--out", "/out", "--serve", str(count))


def container_key(limits: Limits) -> tuple[Any, ...]:
    """The limits a container is started with: runs that share them may share a container."""
    return tuple(getattr(limits, f) for f in ("memory_mb", "cpus", "pids", "tmpfs_mb"))


class Frames:
    """Reads the worker's frames from its stdout, each within a deadline."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self.fd = pipe.fileno()
        self.buffer = bytearray()

    def _fill(self, size: int, deadline: float, stop: threading.Event) -> bool:
        while len(self.buffer) < size:
            if stop.is_set():
                raise Stopped
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.05))
            if ready:
                chunk = os.read(self.fd, _CHUNK)
                if not chunk:
                    return False
                self.buffer += chunk
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


class Tail(threading.Thread):
    """Reads the container's stderr, keeping its last `keep` bytes."""

    def __init__(self, pipe: IO[bytes], keep: int) -> None:
        super().__init__(daemon=True)
        self.pipe, self.keep = pipe, keep
        self.data = bytearray()
        self.total = 0
        self.lock = threading.Lock()

    def run(self) -> None:
        while chunk := os.read(self.pipe.fileno(), _CHUNK):
            with self.lock:
                self.total += len(chunk)
                self.data += chunk
                del self.data[: max(0, len(self.data) - self.keep)]

    def since(self, offset: int) -> str:
        """What arrived after the first `offset` bytes, as far as it is still kept."""
        with self.lock:
            new = self.data[max(0, len(self.data) - (self.total - offset)) :]
        return new.decode("utf-8", errors="replace")


class WarmContainer:
    """One serving container: started at once, ready once its worker has imported torch."""

    def __init__(self, image: str, limits: Limits, count: int) -> None:
        self.name = f"attention-grader-{uuid.uuid4().hex[:16]}"
        self.key = container_key(limits)
        self.retired = False
        self.ready = False
        self.left = count
        argv = [docker_binary(), *hardened_arguments(limits, self.name), image]
        cleanup.register(self.name)
        self.proc = subprocess.Popen(
            [*argv, *serve_command(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.frames = Frames(self.proc.stdout)
        self.stderr = Tail(self.proc.stderr, limits.log_bytes)
        self.stderr.start()

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
            except (ProtocolError, OSError) as exc:
                self.retired = True
                run = WorkerRun(exit_code=None, fault=f"warm worker failed: {exc}")
            run.wall_seconds = time.monotonic() - start
            run.stderr = self.stderr.since(logged)
            if run.fault is None:
                tar.seek(0)
                extract(tar, job, run)
        return run

    def _grade(self, job: WorkerJob, tar: IO[bytes], start: float) -> WorkerRun:
        if not self.ready:
            frame = self.frames.next(start + READY_SECONDS, job.stop)
            if frame is None or frame[0] != b"R":
                self.retired = True
                self.proc.wait(timeout=30)
                detail = self.stderr.since(0).strip()[-2000:]
                return WorkerRun(exit_code=None, fault=f"container did not start: {detail}")
            self.ready = True
            start = time.monotonic()
        stream = encode_submission(job.submission_dir, job.limits.wall_seconds, job.job)
        assert self.proc.stdin is not None
        self.proc.stdin.write(stream)
        self.proc.stdin.flush()
        deadline = start + job.limits.wall_seconds + STARTUP_GRACE_SECONDS
        cap, received = stdout_cap(job.limits), 0
        while True:
            try:
                frame = self.frames.next(deadline, job.stop)
            except TimeoutError:
                self.retired = True
                return WorkerRun(exit_code=None, timed_out=True)
            if frame is None:
                return self._died()
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
        try:
            ended = read_end(payload)
        except ValidationError as exc:
            raise ProtocolError(f"malformed end frame: {exc.errors()[0]['msg']}") from exc
        self.left -= 1
        self.retired = self.retired or ended.retire or self.left == 0
        return WorkerRun(
            exit_code=ended.exit_code,
            timed_out=ended.timed_out,
            oom_killed=bool(ended.oom_kills),
        )

    def _died(self) -> WorkerRun:
        """The container ended in the middle of a submission (its worker killed or crashed)."""
        self.retired = True
        self.proc.wait(timeout=30)
        state = container_state(self.name) or {}  # none: what arrived still counts
        return WorkerRun(
            exit_code=state.get("ExitCode", self.proc.returncode),
            oom_killed=bool(state.get("OOMKilled", False)),
        )

    def close(self) -> None:
        """End the container (at once if it is retired or busy) and remove it."""
        try:
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            if self.retired or not self.ready:
                end_container(self.proc, self.name)
            else:
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    end_container(self.proc, self.name)
            docker(["rm", "--force", self.name], check=False)
        finally:
            cleanup.unregister(self.name)


class WarmBackend(DockerBackend):
    """The Docker sandbox with warm workers: a pool of serving containers."""

    isolation: Isolation = "warm"

    def __init__(self, image: str | None = None, serve_count: int = SERVE_COUNT) -> None:
        super().__init__(image)
        self.serve_count = serve_count
        self._idle: list[WarmContainer] = []
        self._lock = threading.Lock()

    def run(self, job: WorkerJob) -> WorkerRun:
        if job.stop.is_set():
            return WorkerRun(exit_code=None, fault=STOPPED)
        try:
            job.out_dir.mkdir(parents=True, exist_ok=True)
            make_readable(job.submission_dir)
            container = self._acquire(job.limits)
        except (OSError, ValueError) as exc:
            return WorkerRun(exit_code=None, fault=f"cannot start: {exc}")
        try:
            run = container.grade(job)
        finally:
            self._release(container)
        run.environment = {"backend": self.name, "image": self.image, "container": container.name}
        return run

    def _acquire(self, limits: Limits) -> WarmContainer:
        """An idle container started with these limits, or a new one in place of another."""
        key = container_key(limits)
        with self._lock:
            match = next((c for c in self._idle if c.key == key), None)
            other = None if match or not self._idle else self._idle[0]
            for taken in (match, other):
                if taken is not None:
                    self._idle.remove(taken)
        if match is not None:
            return match
        if other is not None:
            other.close()
        return WarmContainer(self.image, limits, self.serve_count)

    def _release(self, container: WarmContainer) -> None:
        if container.retired:
            container.close()
            return
        with self._lock:
            self._idle.append(container)

    def close(self) -> None:
        """End every idle container."""
        with self._lock:
            idle, self._idle = self._idle, []
        for container in idle:
            container.close()
