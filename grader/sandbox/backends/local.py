"""The local backend: the worker as a subprocess with rlimits. NOT a security boundary.

It keeps a runaway submission from taking the machine down (CPU, memory, file size, process
count, a wall clock that kills the whole process group) and hides the host's environment, and
the worker kills every process a problem started before the next one runs; but the candidate's
code runs as your user and can read whatever you can. Use it for your own
code, for tests, and where no Docker engine runs; grade untrusted code with `--backend docker`.
Given a `user` (the grader running as root, e.g. in a Gradescope container), the worker runs
as that unprivileged account: it cannot read or write what only root can, and every process
the account left is killed after each run (so runs as one account go one at a time).

The worker starts through `launch.py`, which sets the rlimits and then drops to the account
in the child itself, before the worker's first instruction: no limit is set from outside.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from grader.sandbox.backends import launch
from grader.sandbox.backends.base import (
    SANDBOX_ENV,
    STOPPED,
    Isolation,
    Limits,
    WorkerJob,
    WorkerRun,
    feed,
)
from grader.sandbox.paths import WORKER_FILE


def process_count(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                count += os.stat(f"/proc/{entry}").st_uid == uid
            except OSError:
                continue
    return count


def rlimits(limits: Limits, processes: int) -> dict[str, int]:
    """The worker's rlimits, inherited by every process it starts (`launch.py` settings)."""
    mb = 1 << 20
    return {
        "RLIMIT_CPU": limits.cpu_seconds,
        "RLIMIT_AS": limits.memory_mb * mb,
        "RLIMIT_FSIZE": limits.file_size_mb * mb,
        "RLIMIT_NPROC": processes,
        "RLIMIT_CORE": 0,
    }


def launched(
    command: list[str], limits: dict[str, int], user: pwd.struct_passwd | None
) -> list[str]:
    """`command` started through `launch.py`: these rlimits, then `user`'s ids, then exec."""
    settings = {
        "rlimits": limits,
        "uid": None if user is None else user.pw_uid,
        "gid": None if user is None else user.pw_gid,
    }
    return [sys.executable, "-I", "-S", launch.__file__, "run", json.dumps(settings), *command]


def sweep(user: pwd.struct_passwd) -> None:
    """Kill every process of `user`'s, also those that left the worker's process group."""
    subprocess.run(
        [sys.executable, "-I", "-S", launch.__file__, "sweep", str(user.pw_uid), str(user.pw_gid)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
        env={},
    )


def wait_or_stop(proc: subprocess.Popen[bytes], deadline: float, stop: threading.Event) -> bool:
    """Wait for `proc` until the deadline or until `stop` is set; True if the deadline passed."""
    while not stop.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            return True
        try:
            proc.wait(timeout=min(0.05, left))
            return False
        except subprocess.TimeoutExpired:
            continue
    return False


def read_capped(path: Path, limit: int) -> str:
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("\n[... truncated]" if len(data) > limit else "")


def hand_over(readable: list[Path], writable: list[Path], user: pwd.struct_passwd) -> None:
    """Let `user` traverse (not list) the folders above these paths, and own the writable ones.

    The readable trees are the grader's own copies (world-readable files), never chowned."""
    for top in readable + writable:
        for parent in top.resolve().parents:
            mode = parent.stat().st_mode
            if not mode & stat.S_IXOTH:
                parent.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)
    for top in writable:
        os.chown(top, user.pw_uid, user.pw_gid)


class LocalBackend:
    """Runs the worker with this interpreter, in a new process group, with rlimits."""

    name = "local"
    isolation: Isolation = "process"

    def __init__(self, user: str | None = None) -> None:
        self.user = pwd.getpwnam(user) if user is not None else None
        self._one_at_a_time = threading.Lock()

    def describe(self) -> dict[str, str]:
        import torch

        isolation = "none (rlimits)" if self.user is None else f"user {self.user.pw_name} (rlimits)"
        return {"backend": self.name, "torch_version": torch.__version__, "isolation": isolation}

    def close(self) -> None:
        """Nothing to release: every worker is gone when its run ends."""

    def run(self, job: WorkerJob) -> WorkerRun:
        if self.user is None:
            return self._run(job, self.user)
        with self._one_at_a_time:
            try:
                return self._run(job, self.user)
            finally:
                sweep(self.user)

    def _run(self, job: WorkerJob, user: pwd.struct_passwd | None) -> WorkerRun:
        limits = job.limits
        home = tempfile.mkdtemp(prefix="grader-home-")
        worker_home = Path(home) / "home" if user is not None else Path(home)
        worker_home.mkdir(exist_ok=True)
        env = {
            **SANDBOX_ENV,
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(worker_home),
            "TMPDIR": str(worker_home),
        }
        worker = [
            sys.executable,
            "-I",
            str(WORKER_FILE),
            "--submission",
            str(job.submission_dir),
            "--out",
            str(job.out_dir),
        ]
        processes = process_count(os.getuid() if user is None else user.pw_uid) + limits.pids
        job.out_dir.mkdir(parents=True, exist_ok=True)
        if user is not None:
            hand_over([job.submission_dir], [job.out_dir, worker_home], user)
        stdout_path, stderr_path = Path(home) / "stdout", Path(home) / "stderr"
        start = time.monotonic()
        with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
            proc = subprocess.Popen(
                launched(worker, rlimits(limits, processes), user),
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                env=env,
                cwd=job.submission_dir,
                start_new_session=True,
            )
            assert proc.stdin is not None
            timed_out = False
            try:
                feed(proc.stdin.write, job.job, proc.stdin.close)
                timed_out = wait_or_stop(proc, start + limits.wall_seconds, job.stop)
            finally:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        run = WorkerRun(
            exit_code=proc.returncode,
            timed_out=timed_out,
            wall_seconds=time.monotonic() - start,
            stdout=read_capped(stdout_path, limits.log_bytes),
            stderr=read_capped(stderr_path, limits.log_bytes),
            fault=STOPPED if job.stop.is_set() else None,
        )
        shutil.rmtree(home, ignore_errors=True)
        return run
