"""Run the worker in a locked-down, throw-away docker container.

The container has no network, a read-only root, no capabilities, a non-root user, and only
capped tmpfs mounts to write to: /tmp, /out and /dev/shm (POSIX message queues are capped at
zero bytes). The submission is a read-only bind mount, made readable for the sandbox user (uid
10001) by adding read bits on the host if they lack them; the job arrives on stdin, through
the engine's attach socket. The worker is PID 1 (no init process): it reaps every orphan, and
no process of the container can signal it or open its /proc files. Results leave the
container as a ustar stream on its stdout, read with a byte cap and extracted by a strict
reader of our own.
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import IO, Any

from docker.models.containers import Container
from docker.types import LogConfig, Mount, Ulimit

from grader.sandboxing.backends import cleanup
from grader.sandboxing.backends.base import (
    SANDBOX_ENV,
    STOPPED,
    BackendName,
    Isolation,
    Limits,
    WorkerJob,
    WorkerRun,
    feed,
)
from grader.sandboxing.backends.cleanup import Run, Stopped
from grader.sandboxing.backends.drain import MIB, extract, stdout_cap
from grader.sandboxing.backends.streams import Streams
from grader.sandboxing.defaults import DEFAULT_TAG
from grader.sandboxing.engine import (
    DockerError,
    client,
    engine_errors,
    engine_reachable,
    remove_containers,
)
from grader.sandboxing.image import ImageError, image_exists, image_facts

SANDBOX_UID = 10001
STARTUP_GRACE_SECONDS = 5.0
"""Added to `Limits.wall_seconds` for creating and starting the container."""
START_ATTEMPTS = 3
SHM_MB = 8
EXIT_SECONDS = 30
"""Time allowed for a container to be gone once its streams ended or it was killed."""
IN_IMAGE = ("python3", "-I", "/opt/worker/sandbox/__main__.py")
"""How the image runs the worker (the `sandbox` package, copied to /opt/worker)."""
WORKER_COMMAND: tuple[str, ...] = (
    *IN_IMAGE,
    "--submission", "/submission", "--out", "/out", "--clean-scratch",
)  # fmt: skip


def hardened_options(lim: Limits, name: str, labels: dict[str, str]) -> dict[str, Any]:
    """Every option of a sandbox container (`containers.create` keywords) but its command and
    the submission's mount. Its stdin is open, for a client attached before it starts."""
    tmpfs = "rw,noexec,nosuid,nodev"
    out = f"{tmpfs},size={lim.output_mb}m,uid={SANDBOX_UID},gid={SANDBOX_UID},mode=0700"
    ulimits = {
        "fsize": lim.file_size_mb * MIB,
        "cpu": lim.cpu_seconds,
        "core": 0,
        "nofile": 1024,
        "msgqueue": 0,
    }
    return {
        "name": name,
        "labels": labels,
        "stdin_open": True,
        "log_config": LogConfig(type=LogConfig.types.NONE),
        "network_mode": "none",
        "hostname": "sandbox",
        "read_only": True,
        "tmpfs": {"/tmp": f"{tmpfs},size={lim.tmpfs_mb}m,mode=1777", "/out": out},
        "shm_size": f"{SHM_MB}m",
        "mem_limit": f"{lim.memory_mb}m",
        "memswap_limit": f"{lim.memory_mb}m",
        "nano_cpus": round(lim.cpus * 1e9),
        "pids_limit": lim.pids,
        "ulimits": [Ulimit(name=k, soft=v, hard=v) for k, v in ulimits.items()],
        "user": f"{SANDBOX_UID}:{SANDBOX_UID}",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "working_dir": "/tmp",
        "environment": {**SANDBOX_ENV, "HOME": "/tmp", "TMPDIR": "/tmp"},
    }


def start_container(
    image: str, command: Sequence[str], options: dict[str, Any], run: Run, stop: threading.Event
) -> tuple[Container, Streams]:
    """Create a container, attach to its streams, then start it (`DockerError` if it cannot;
    `Stopped` at once when `stop` is set, what was made is removed). A start the engine fails
    (a runtime hook killed on a loaded machine) is tried again with a new container: nothing
    has run in it yet."""
    name = str(options["name"])
    attempt = 1
    while True:
        with engine_errors("container did not start"):
            container = run.call(
                lambda: client().containers.create(image, list(command), **options), stop, name
            )
        streams = run.call(partial(Streams, container), stop, name)
        try:
            with engine_errors("container did not start"):
                run.call(container.start, stop, name)
        except DockerError as exc:
            streams.close()
            if attempt == START_ATTEMPTS or isinstance(exc, Stopped):
                raise
            run.call(partial(remove_containers, [str(container.id)]), stop)
            time.sleep(0.5 * attempt)
            attempt += 1
        else:
            return container, streams


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
    """Why the docker backend cannot run here (no engine, no image), or None."""
    tag = image or DEFAULT_TAG
    if not engine_reachable():
        return (
            "no docker engine answers: start one (`systemctl start docker`, or `dockerd &` as "
            "root) or point DOCKER_HOST at one"
        )
    if not image_exists(tag):
        build = "grader sandbox build" + ("" if tag == DEFAULT_TAG else f" --tag {tag}")
        return f"sandbox image {tag} is missing: build it with `{build}`"
    return None


class Drain(threading.Thread):
    """Reads a container's streams to their end: at most `cap` bytes of stdout into `sink`,
    the first `keep` bytes of stderr into `head`."""

    def __init__(self, streams: Streams, sink: IO[bytes], cap: int, keep: int) -> None:
        super().__init__(daemon=True)
        self.streams, self.sink, self.cap, self.keep = streams, sink, cap, keep
        self.head = bytearray()
        self.total = 0
        self.overflow = threading.Event()

    def run(self) -> None:
        try:
            while (pieces := self.streams.read(None)) is not None:
                for is_stdout, data in pieces:
                    if is_stdout:
                        self._out(data)
                    else:
                        self.head += data[: max(0, self.keep - len(self.head))]
        except (OSError, ValueError):  # the connection was dropped
            return

    def _out(self, data: bytes) -> None:
        room = max(0, self.cap - self.total)
        self.total += len(data)
        if room:
            self.sink.write(data[:room])
        if self.total > self.cap:
            self.overflow.set()


def container_state(container: Container, run: Run, stop: threading.Event) -> dict[str, Any] | None:
    """The engine's record of how a container ran, if it still has one (and no stop came)."""
    try:
        with engine_errors("cannot inspect the container"):
            run.call(container.reload, stop)
    except DockerError:
        return None
    state = container.attrs.get("State")
    return state if isinstance(state, dict) else None


def wait_exit(container: Container, seconds: float, run: Run, stop: threading.Event) -> int | None:
    """The container's exit code once it ended, or None if it runs on after `seconds` (or a
    stop came)."""
    try:
        with engine_errors("cannot wait for the container"):
            status = run.call(lambda: container.wait(timeout=max(seconds, 0.1)), stop)
    except DockerError:
        return None
    code = status.get("StatusCode")
    return code if isinstance(code, int) else None


def kill(container: Container, run: Run, stop: threading.Event) -> None:
    """SIGKILL the container's processes; it may have ended already."""
    try:
        with engine_errors("cannot kill the container"):
            run.call(container.kill, stop)
    except DockerError:
        return


class SandboxImage:
    """The image a Docker backend runs, and what every report records of it: its facts, read
    once (an error is not kept: the next report tries again), and the backend's isolation; the
    run its containers belong to."""

    def __init__(self, tag: str | None) -> None:
        self.tag = tag or DEFAULT_TAG
        self._facts: dict[str, str] | None = None
        self.run = Run()
        cleanup.install()

    def describe(self, isolation: Isolation) -> dict[str, str]:
        named = {"backend": BackendName.docker.value, "image": self.tag}
        if self._facts is None:
            try:
                self._facts = image_facts(self.tag).as_dict()
            except (ImageError, DockerError) as exc:
                return {**named, "image_error": str(exc), "isolation": isolation}
        return {**named, **self._facts, "isolation": isolation}


class DockerBackend:
    """Backend that runs the worker (the `sandbox` package) inside the sandbox image."""

    name = BackendName.docker
    isolation = Isolation.container

    def __init__(self, image: str | None = None, command: Sequence[str] = WORKER_COMMAND) -> None:
        self.sandbox = SandboxImage(image)
        self.image = self.sandbox.tag
        self.command = tuple(command)

    def describe(self) -> dict[str, str]:
        return self.sandbox.describe(self.isolation)

    def close(self) -> None:
        """Remove what a stop left: every container is removed when its run ends."""
        self.sandbox.run.sweep()

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
        except OSError as exc:
            return WorkerRun(exit_code=None, environment=env, fault=f"cannot start: {exc}")
        with tempfile.TemporaryFile(prefix="grader-stdout-") as tar:
            try:
                run = self._run_container(name, job, tar)
            finally:
                self.sandbox.run.remove(name, job.stop)
            run.environment = env
            if run.fault is None:  # what arrived before a timeout or a cut still counts
                extract(tar, job, run)
        return run

    def _run_container(self, name: str, job: WorkerJob, tar: IO[bytes]) -> WorkerRun:
        limits = job.limits
        start = time.monotonic()
        if job.stop.is_set():
            return WorkerRun(exit_code=None, fault=STOPPED)
        source = str(job.submission_dir.resolve())
        submission = Mount(target="/submission", source=source, type="bind", read_only=True)
        engine = self.sandbox.run
        options = {**hardened_options(limits, name, engine.labels), "mounts": [submission]}
        try:
            container, streams = start_container(
                self.image, self.command, options, engine, job.stop
            )
        except DockerError as exc:
            return WorkerRun(exit_code=None, fault=STOPPED if job.stop.is_set() else str(exc))
        drain = Drain(streams, tar, stdout_cap(limits), limits.log_bytes)
        try:
            feed(streams.send, job.job, streams.end_input)
            drain.start()
            deadline = start + limits.wall_seconds + STARTUP_GRACE_SECONDS
            timed_out = self._watch(drain, deadline, job)
            cut = timed_out or drain.overflow.is_set() or job.stop.is_set()
            code = None
            if not cut:
                code = wait_exit(container, deadline - time.monotonic(), engine, job.stop)
            if code is None and not job.stop.is_set():  # cut, or running once its streams ended
                timed_out = timed_out or not cut
                kill(container, engine, job.stop)
            elapsed = time.monotonic() - start
            if not job.stop.is_set():  # a stopped one is removed without waiting for it
                drain.join(timeout=EXIT_SECONDS)
        finally:
            streams.close()
        run = WorkerRun(
            exit_code=None,
            timed_out=timed_out,
            wall_seconds=elapsed,
            stderr=drain.head.decode("utf-8", errors="replace"),
        )
        if job.stop.is_set():
            run.fault = STOPPED
            return run
        if drain.overflow.is_set():
            run.output_error = f"stdout exceeded {drain.cap} bytes"
        if code == 0:
            run.exit_code = 0  # the worker's own clean exit: nothing more to ask the engine
            return run
        state = container_state(container, engine, job.stop)
        if job.stop.is_set():
            run.fault = STOPPED
            return run
        if state is None:
            run.fault = "the engine lost the container"
            return run
        if state.get("Error"):
            run.fault = f"container error: {state['Error']}"
        run.exit_code = int(state.get("ExitCode", -1))
        run.oom_killed = bool(state.get("OOMKilled", False))
        return run

    @staticmethod
    def _watch(drain: Drain, deadline: float, job: WorkerJob) -> bool:
        """Wait for the container's streams to end, a cut (too much output, `job.stop`) or
        the deadline; True if the deadline passed."""
        while drain.is_alive():
            if drain.overflow.is_set() or job.stop.is_set():
                return False
            if time.monotonic() >= deadline:
                return True
            drain.overflow.wait(0.05)
        return False
