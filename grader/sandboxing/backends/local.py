"""The local backend: the worker as a subprocess with rlimits. NOT a security boundary.

It keeps a runaway submission from taking the machine down (CPU, memory: a memory cgroup of
the worker's own where the grader may make one, file size, process count, a wall clock that
kills the whole process group) and hides the host's environment, and
the worker kills every process a problem started before the next one runs; but the candidate's
code runs as your user and can read whatever you can. Use it for your own
code, for tests, and where no Docker engine runs; grade untrusted code with `--backend docker`.
Given a `user` (the grader running as root, e.g. in a Gradescope container), the worker runs
as that unprivileged account: it cannot read or write what only root can, and every process
the account left is killed after each run (so runs as one account go one at a time).

The worker starts through `launch.py`, which sets the rlimits and then drops to the account
in the child itself, before the worker's first instruction: no limit is set from outside.
Where the machine lets an unprivileged account make one (util-linux's `unshare`, user
namespaces allowed), the worker runs as PID 1 of a PID namespace of its own: no process of a
submission can see or signal another's (a process left behind by one submission SIGKILLed the
problems of another graded beside it), and none outlives its worker. The results come as a
container's do, a ustar stream on the worker's stdout (`drain.py`): nothing is read from a
folder the candidate's code can write, and no problem finds what an earlier one left.
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
from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError
from grader.sandboxing.backends import launch
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
from grader.sandboxing.backends.drain import EXTRACT_SECONDS, PipeDrain, extract, stdout_cap
from grader.sandboxing.backends.memorygroup import MemoryGroup, MemoryGroups
from grader.sandboxing.capped import read_log
from grader.sandboxing.paths import WORKER_FILE
from sandbox.folders import SHARED_ROOTS


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
    """The worker's rlimits, inherited by every process it starts (`launch.py` settings). Its
    address space is capped by the worker itself, once torch is imported (`--memory-mb`)."""
    mb = 1 << 20
    return {
        "RLIMIT_CPU": limits.cpu_seconds,
        "RLIMIT_FSIZE": limits.file_size_mb * mb,
        "RLIMIT_NPROC": processes,
        "RLIMIT_CORE": 0,
    }


def launched(
    command: list[str],
    limits: dict[str, int],
    user: pwd.struct_passwd | None,
    group: MemoryGroup | None = None,
) -> list[str]:
    """`command` started through `launch.py`: in `group`, with these rlimits, then `user`'s
    ids, then exec."""
    settings = {
        "cgroup": None if group is None else str(group.procs),
        "rlimits": limits,
        "uid": None if user is None else user.pw_uid,
        "gid": None if user is None else user.pw_gid,
    }
    return [sys.executable, "-I", "-S", launch.__file__, "run", json.dumps(settings), *command]


NAMESPACE_OPTIONS = (
    "--user",
    "--map-current-user",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
)
"""`unshare`'s options for a PID namespace of the worker's own, with its own /proc, made by an
unprivileged account (a user namespace that maps it to itself, so it keeps no capability)."""


def namespace_prefix(user: pwd.struct_passwd | None) -> tuple[str, ...]:
    """The command that starts the worker in a PID namespace of its own, if this machine lets
    the account that runs it make one (tried once, as that account); else nothing."""
    unshare, true = shutil.which("unshare"), shutil.which("true")
    if unshare is None or true is None:
        return ()
    try:
        tried = subprocess.run(
            launched([unshare, *NAMESPACE_OPTIONS, true], {}, user),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            env={},
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return (unshare, *NAMESPACE_OPTIONS) if tried.returncode == 0 else ()


class NoSuchAccount(GraderError):
    """The account the candidate's code is to run as is not on this machine."""


def account(name: str) -> pwd.struct_passwd:
    """The account `name`; `NoSuchAccount` when the machine has none of that name."""
    try:
        return pwd.getpwnam(name)
    except (KeyError, ValueError):  # not found, or a name with a NUL byte
        raise NoSuchAccount(f"no account named {name!r} on this machine (--user)") from None


def sweep(user: pwd.struct_passwd) -> None:
    """Kill every process of `user`'s, also those that left the worker's process group."""
    subprocess.run(
        [sys.executable, "-I", "-S", launch.__file__, "sweep", str(user.pw_uid), str(user.pw_gid)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
        env={},
    )


def wait_or_stop(proc: subprocess.Popen[bytes], deadline: float, *stops: threading.Event) -> bool:
    """Wait for `proc` until the deadline or until one of `stops` is set; True if the deadline
    passed."""
    while not any(stop.is_set() for stop in stops):
        left = deadline - time.monotonic()
        if left <= 0:
            return True
        try:
            proc.wait(timeout=min(0.05, left))
            return False
        except subprocess.TimeoutExpired:
            continue
    return False


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


@dataclass
class Started:
    """A worker started through `launch.py`: it imports torch, then waits for its job."""

    proc: subprocess.Popen[bytes]
    home: Path
    limits: Limits
    submission_dir: Path
    out_dir: Path
    group: MemoryGroup | None  # its memory cgroup, where one could be made


class LocalBackend:
    """Runs the worker with this interpreter, in a new process group, with rlimits.

    Given `ready` limits, one worker is started at once with them (in folders of its own), so
    that it has imported torch by the time the first job with those limits arrives: the
    job's files are copied in. `grader check` starts it before the host loads the course, so
    that the two imports of torch overlap."""

    name = BackendName.local
    isolation = Isolation.process

    def __init__(self, user: str | None = None, ready: Limits | None = None) -> None:
        self.user = account(user) if user is not None else None
        self.namespace = namespace_prefix(self.user)
        self.groups = MemoryGroups.here()
        self._one_at_a_time = threading.Lock()
        self._ready: Started | None = None
        if ready is not None:
            if self.user is not None:
                raise ValueError("a worker started ahead runs as this account only")
            home = Path(tempfile.mkdtemp(prefix="grader-home-"))
            self._ready = self._start(ready, home / "submission", home / "out", home)

    def describe(self) -> dict[str, str]:
        import torch

        account = "the grader's" if self.user is None else self.user.pw_name
        account += " (rlimits)"
        pids = "its own" if self.namespace else "the machine's"
        groups = self.groups
        memory = "address space over torch's start (rlimit)"
        if groups is not None:
            memory = f"a memory cgroup (v{groups.hierarchy.version})"
        return {
            "backend": self.name,
            "torch_version": torch.__version__,
            "runs_as": account,
            "pid_namespace": pids,
            "memory_limit": memory,
        }

    def close(self) -> None:
        """End the worker started ahead if no job came for it."""
        ready, self._ready = self._ready, None
        if ready is not None:
            discard(ready)

    def run(self, job: WorkerJob) -> WorkerRun:
        ready, self._ready = self._ready, None
        if ready is not None and (ready.limits != job.limits or ready.proc.poll() is not None):
            discard(ready)  # started for other limits, or ended before its job
            ready = None
        if ready is not None:
            try:
                shutil.copytree(job.submission_dir, ready.submission_dir, dirs_exist_ok=True)
                return self._finish(ready, job)
            finally:
                discard(ready)
        if self.user is None:
            return self._run(job)
        with self._one_at_a_time:
            return self._run(job)

    def _run(self, job: WorkerJob) -> WorkerRun:
        home = Path(tempfile.mkdtemp(prefix="grader-home-"))
        started = self._start(job.limits, job.submission_dir, home / "out", home)
        try:
            return self._finish(started, job)
        finally:
            discard(started)

    def _start(self, limits: Limits, submission_dir: Path, out_dir: Path, home: Path) -> Started:
        """Start the worker on these folders; it reads its job from stdin once torch is in."""
        user = self.user
        worker_home = home / "home"
        worker_home.mkdir(exist_ok=True)
        env = {
            **SANDBOX_ENV,
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(worker_home),
            "TMPDIR": str(worker_home),
        }
        group = None if self.groups is None else self.groups.make(limits.memory_mb << 20)
        # in a memory group the worker's memory is capped; else it caps its own address space
        address_space = [] if group is not None else ["--memory-mb", str(limits.memory_mb)]
        worker = [
            *self.namespace,
            sys.executable,
            "-I",
            str(WORKER_FILE),
            "--submission",
            str(submission_dir),
            "--out",
            str(out_dir),
            *scratch_options(worker_home, user),
            *address_space,
        ]
        processes = process_count(os.getuid() if user is None else user.pw_uid) + limits.pids
        submission_dir.mkdir(parents=True, exist_ok=True)
        out_dir.mkdir(parents=True, exist_ok=True)
        if user is not None:
            hand_over([submission_dir], [out_dir, worker_home], user)
        try:
            with (home / "stderr").open("wb") as err:
                proc = subprocess.Popen(
                    launched(worker, rlimits(limits, processes), user, group),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=err,
                    env=env,
                    cwd=submission_dir,
                    start_new_session=True,
                )
        except BaseException:
            if group is not None:
                group.remove()
            raise
        return Started(proc, home, limits, submission_dir, out_dir, group)

    def _finish(self, started: Started, job: WorkerJob) -> WorkerRun:
        """Give the started worker its job and read its result stream, within the wall clock."""
        proc, limits = started.proc, started.limits
        assert proc.stdin is not None and proc.stdout is not None
        start = time.monotonic()
        with tempfile.TemporaryFile(prefix="grader-stdout-") as tar:
            drain = PipeDrain(os.dup(proc.stdout.fileno()), tar, stdout_cap(limits))
            proc.stdout.close()
            drain.start()
            try:
                feed(proc.stdin.write, job.job, proc.stdin.close)
                deadline = start + limits.wall_seconds
                timed_out = wait_or_stop(proc, deadline, job.stop, drain.overflow)
            finally:
                end(started)
                if self.user is not None:  # no process of the account's left
                    sweep(self.user)
            drain.join(timeout=EXTRACT_SECONDS)
            run = WorkerRun(
                exit_code=proc.returncode,
                timed_out=timed_out,
                wall_seconds=time.monotonic() - start,
                stderr=read_log(started.home / "stderr", limits.log_bytes),
                output_error=drain.output_error(),
                fault=STOPPED if job.stop.is_set() else None,
                oom_killed=started.group is not None and started.group.oom_kills() > 0,
            )
            if run.fault is None:  # what arrived before a timeout or a cut still counts
                extract(tar, job, run)
        return run


def scratch_options(home: Path, user: pwd.struct_passwd | None) -> list[str]:
    """The worker's `--scratch` folders, whose entries of its account's it removes before each
    problem: its home (its TMPDIR), and, as an account of its own, the machine's shared ones."""
    shared = [str(root) for root in SHARED_ROOTS if root.is_dir()] if user is not None else []
    return [option for folder in (str(home), *shared) for option in ("--scratch", folder)]


def end(started: Started) -> None:
    """Kill the worker's process group and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(started.proc.pid, signal.SIGKILL)
    started.proc.wait()
    for pipe in (started.proc.stdin, started.proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def discard(started: Started) -> None:
    """End the worker, kill what is left in its memory group and remove the group, and remove
    its folder (its logs, and its own copies if started ahead)."""
    end(started)
    if started.group is not None:
        started.group.remove()
    shutil.rmtree(started.home, ignore_errors=True)
