"""Run the worker in a locked-down, throw-away docker container.

The container has no network, a read-only root, no capabilities, a non-root user, and only
capped tmpfs mounts to write to: /tmp, /out and /dev/shm (POSIX message queues are capped at
zero bytes). The submission is a read-only bind mount, made readable for the sandbox user (uid
10001) by adding read bits on the host if they lack them; the job arrives on stdin. The worker
is PID 1 (no `--init`): it reaps every orphan, and no process of the container can signal it
or open its /proc files. Results leave the container as a ustar stream on its stdout
(`worker.py --emit-tar`), read with a byte cap and extracted by a strict reader of our own.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from grader.sandbox.backends import cleanup
from grader.sandbox.backends.base import (
    SANDBOX_ENV,
    STOPPED,
    Isolation,
    Limits,
    WorkerJob,
    WorkerRun,
    feed,
)
from grader.sandbox.engine import LABEL, DockerError, docker, docker_binary, engine_reachable
from grader.sandbox.image import DEFAULT_TAG, ImageError, image_exists, image_facts
from grader.sandbox.ustar import UnsafeArchiveError, extract_results

MIB = 1 << 20
SANDBOX_UID = 10001
STARTUP_GRACE_SECONDS = 5.0
"""Added to `Limits.wall_seconds` for creating and starting the container."""
SHM_MB = 8
MAX_MEMBERS = 4096
"""Most files accepted from one worker's output."""
EXTRACT_SECONDS = 60.0
"""Time allowed for reading the result stream, after the container ended."""
WORKER_COMMAND: tuple[str, ...] = (
    "python3", "/opt/worker/worker.py",
    "--submission", "/submission", "--out", "/out", "--emit-tar",
)  # fmt: skip
_CHUNK = 1 << 16


def stdout_cap(limits: Limits) -> int:
    """Bytes of stdout accepted: the output tmpfs plus tar headers for every member."""
    return limits.output_mb * MIB + MAX_MEMBERS * 1024 + MIB


def run_arguments(
    job: WorkerJob, name: str, image: str, command: Sequence[str] = WORKER_COMMAND
) -> list[str]:
    """The `docker run` arguments (after `docker`) for one job's container."""
    submission = job.submission_dir.resolve()
    if any(c in str(submission) for c in ',"\n'):
        raise ValueError(f"unsupported character in mount path {submission}")
    mount = f"type=bind,source={submission},target=/submission,readonly"
    return [*hardened_arguments(job.limits, name), "--mount", mount, image, *command]


def hardened_arguments(lim: Limits, name: str) -> list[str]:
    """Every `docker run` option of a sandbox container but the submission's mount."""
    args = [
        "run", "--name", name, "--label", f"{LABEL}=1", "--pull", "never",
        "--interactive", "--log-driver", "none",
        "--network", "none", "--hostname", "sandbox",
        "--read-only",
        "--tmpfs", f"/tmp:rw,noexec,nosuid,nodev,size={lim.tmpfs_mb}m,mode=1777",
        "--tmpfs",
        f"/out:rw,noexec,nosuid,nodev,size={lim.output_mb}m,"
        f"uid={SANDBOX_UID},gid={SANDBOX_UID},mode=0700",
        "--shm-size", f"{SHM_MB}m",
        "--memory", f"{lim.memory_mb}m", "--memory-swap", f"{lim.memory_mb}m",
        "--cpus", f"{lim.cpus:g}",
        "--pids-limit", str(lim.pids),
        "--ulimit", f"fsize={lim.file_size_mb * MIB}",
        "--ulimit", f"cpu={lim.cpu_seconds}",
        "--ulimit", "core=0",
        "--ulimit", "nofile=1024:1024",
        "--ulimit", "msgqueue=0",
        "--user", f"{SANDBOX_UID}:{SANDBOX_UID}",
        "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges",
        "--workdir", "/tmp",
    ]  # fmt: skip
    for key, value in {**SANDBOX_ENV, "HOME": "/tmp", "TMPDIR": "/tmp"}.items():
        args += ["--env", f"{key}={value}"]
    return args


def make_readable(root: Path) -> None:
    """Add the read (and directory search) bits the sandbox user needs; follow no links."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames, ""]:
            path = os.path.join(dirpath, name) if name else dirpath
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                continue
            need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(st.st_mode) else 0)
            if st.st_mode & need != need:
                os.chmod(path, stat.S_IMODE(st.st_mode) | need)


def unavailable_reason(image: str | None = None) -> str | None:
    """Why the docker backend cannot run here (no client, no engine, no image), or None."""
    tag = image or DEFAULT_TAG
    try:
        docker_binary()
    except DockerError as exc:
        return str(exc)
    if not engine_reachable():
        return "no docker engine answers"
    if not image_exists(tag):
        return f"sandbox image {tag} is missing (build it with `grader sandbox build`)"
    return None


class Drain(threading.Thread):
    """Reads a pipe to its end, keeping at most `keep` bytes (in `sink` or in memory)."""

    def __init__(self, pipe: IO[bytes], keep: int, sink: IO[bytes] | None = None) -> None:
        super().__init__(daemon=True)
        self.pipe, self.keep, self.sink = pipe, keep, sink
        self.head = bytearray()
        self.total = 0
        self.overflow = threading.Event()

    def run(self) -> None:
        while chunk := os.read(self.pipe.fileno(), _CHUNK):
            room = max(0, self.keep - self.total)
            self.total += len(chunk)
            if room:
                kept = chunk[:room]
                if self.sink is not None:
                    self.sink.write(kept)
                else:
                    self.head += kept
            if self.total > self.keep:
                self.overflow.set()


def end_container(proc: subprocess.Popen[bytes], name: str) -> None:
    """Kill the container and wait for its client, removing it if the client outlives the kill:
    a container that `docker run` created after the kill would otherwise run on."""
    docker(["kill", name], check=False)
    for _ in range(60):
        try:
            proc.wait(timeout=0.5)
            return
        except subprocess.TimeoutExpired:
            docker(["rm", "--force", name], check=False)
    proc.kill()
    proc.wait()


class DockerBackend:
    """Backend that runs `grader/sandbox/worker.py` inside the sandbox image."""

    name = "docker"
    isolation: Isolation = "container"

    def __init__(self, image: str | None = None, command: Sequence[str] = WORKER_COMMAND) -> None:
        self.image = image or DEFAULT_TAG
        self.command = tuple(command)
        self._facts: dict[str, str] | None = None
        cleanup.install()

    def describe(self) -> dict[str, str]:
        if self._facts is None:
            try:
                facts = image_facts(self.image)
            except (ImageError, DockerError) as exc:
                failed = {"backend": self.name, "image": self.image, "image_error": str(exc)}
                return {**failed, "isolation": self.isolation}
            self._facts = {
                "backend": self.name,
                "image": self.image,
                **facts.as_dict(),
                "isolation": self.isolation,
            }
        return dict(self._facts)

    def close(self) -> None:
        """Nothing to release: every container is removed when its run ends."""

    def run(self, job: WorkerJob) -> WorkerRun:
        """Run one container to completion and extract its result stream into `job.out_dir`.

        `stdout` stays empty unless the stream was rejected (`output_error`); then it holds
        the stream's first `log_bytes`, decoded. `fault` means the container never ran or the
        run was stopped (`job.stop`).
        """
        name = f"attention-grader-{uuid.uuid4().hex[:16]}"
        env = {"backend": self.name, "image": self.image, "container": name}
        try:
            job.out_dir.mkdir(parents=True, exist_ok=True)
            make_readable(job.submission_dir)
            argv = [docker_binary(), *run_arguments(job, name, self.image, self.command)]
        except (OSError, ValueError, DockerError) as exc:
            return WorkerRun(exit_code=None, environment=env, fault=f"cannot start: {exc}")
        with tempfile.TemporaryFile(prefix="grader-stdout-") as tar:
            cleanup.register(name)
            try:
                run = self._run_container(argv, name, job, tar)
            finally:
                try:
                    docker(["rm", "--force", name], check=False)
                finally:
                    cleanup.unregister(name)
            run.environment = env
            if run.fault is None:  # what arrived before a timeout or a cut still counts
                tar.seek(0)
                extract(tar, job, run)
        return run

    def _run_container(
        self, argv: list[str], name: str, job: WorkerJob, tar: IO[bytes]
    ) -> WorkerRun:
        limits = job.limits
        start = time.monotonic()
        if job.stop.is_set():
            return WorkerRun(exit_code=None, fault=STOPPED)
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        feed(proc.stdin, job.job)
        out = Drain(proc.stdout, stdout_cap(limits), sink=tar)
        err = Drain(proc.stderr, limits.log_bytes)
        out.start()
        err.start()
        deadline = start + limits.wall_seconds + STARTUP_GRACE_SECONDS
        timed_out = False
        while proc.poll() is None:
            if out.overflow.is_set() or job.stop.is_set():
                break
            if time.monotonic() >= deadline:
                timed_out = True
                break
            out.overflow.wait(0.05)
        if proc.poll() is None:
            end_container(proc, name)
        elapsed = time.monotonic() - start
        out.join(timeout=30)
        err.join(timeout=30)
        run = WorkerRun(
            exit_code=None,
            timed_out=timed_out,
            wall_seconds=elapsed,
            stderr=err.head.decode("utf-8", errors="replace"),
        )
        if job.stop.is_set():
            run.fault = STOPPED
            return run
        if out.overflow.is_set():
            run.output_error = f"stdout exceeded {out.keep} bytes"
        if proc.returncode == 0 and not timed_out:
            run.exit_code = 0  # the worker's own clean exit: nothing to ask the engine
            return run
        state = container_state(name)
        if state is None or str(state.get("StartedAt", "0001")).startswith("0001"):
            run.fault = "container did not start: " + run.stderr.strip()[-2000:]
            return run
        if state.get("Error"):
            run.fault = f"container error: {state['Error']}"
        run.exit_code = int(state.get("ExitCode", -1))
        run.oom_killed = bool(state.get("OOMKilled", False))
        return run


def container_state(name: str) -> dict[str, Any] | None:
    """The engine's record of how a container ran, if it still has one."""
    try:
        raw = docker(["inspect", "--type", "container", "--format", "{{json .State}}", name])
    except DockerError:
        return None
    state = json.loads(raw)
    return state if isinstance(state, dict) else None


def extract(tar: IO[bytes], job: WorkerJob, run: WorkerRun) -> None:
    """Extract a result stream into `job.out_dir`; a rejected stream is noted in `run`."""
    limits = job.limits
    try:
        extract_results(
            tar,
            job.out_dir,
            job.outputs,
            max_bytes=limits.output_mb * MIB,
            max_file_bytes=limits.file_size_mb * MIB,
            max_members=MAX_MEMBERS,
            seconds=EXTRACT_SECONDS,
        )
    except UnsafeArchiveError as exc:
        rejected = f"result stream rejected: {exc}"
        run.output_error = f"{run.output_error}; {rejected}" if run.output_error else rejected
        tar.seek(0)
        run.stdout = tar.read(limits.log_bytes).decode("utf-8", errors="replace")
