"""The fork backend: the worker as a fork of the grader's own process. NO boundary at all.

For a candidate's `grader check` of their own code on their own machine, where nothing needs
keeping from the candidate: the worker starts with torch already imported (the grader imports
it for the reference), so a check costs about one import of torch instead of two. The worker
is the sandbox's own (`sandbox.worker.main`): the same children per problem, the same policy
guard armed in each, the same records read back through the same caps as the local backend's.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from grader.sandboxing.backends.base import (
    BackendName,
    Isolation,
    WorkerJob,
    WorkerRun,
    feed,
)
from grader.sandboxing.backends.drain import EXTRACT_SECONDS, PipeDrain, extract, stdout_cap
from grader.sandboxing.capped import read_log

WORKER_FAILED = 70


@dataclass(frozen=True)
class Forked:
    """A forked worker waiting for its job on a pipe, in a folder of its own."""

    pid: int
    job_pipe: int
    results: int
    home: Path

    @property
    def submission_dir(self) -> Path:
        return self.home / "submission"

    @property
    def out_dir(self) -> Path:
        return self.home / "out"


class ForkBackend:
    """Runs the worker in a fork of this process, in a session of its own.

    Torch is imported and one worker forked at once: it installs its guard while the grader
    reads the course, and the first job's files are copied into its folder."""

    name = BackendName.fork
    isolation = Isolation.process

    def __init__(self) -> None:
        self._ready = fork_worker() if torch_imported() else None

    def describe(self) -> dict[str, str]:
        import torch  # imported once grading needs it: a course read without it says so

        return {"backend": self.name, "torch": torch.__version__}

    def close(self) -> None:
        """End the worker forked ahead if no job came for it."""
        ready, self._ready = self._ready, None
        if ready is not None:
            os.close(ready.job_pipe)
            os.close(ready.results)
            kill(ready.pid)
            shutil.rmtree(ready.home, ignore_errors=True)

    def run(self, job: WorkerJob) -> WorkerRun:
        forked, self._ready = self._ready, None
        forked = forked or fork_worker()
        start = time.monotonic()
        with tempfile.TemporaryFile(prefix="grader-stdout-") as tar:
            drain = PipeDrain(forked.results, tar, stdout_cap(job.limits))
            drain.start()
            try:
                shutil.copytree(job.submission_dir, forked.submission_dir, dirs_exist_ok=True)
                feed(
                    lambda data: os.write(forked.job_pipe, data),
                    job.job,
                    lambda: os.close(forked.job_pipe),
                )
                status, timed_out = wait(forked.pid, start + job.limits.wall_seconds, job, drain)
                drain.join(timeout=EXTRACT_SECONDS)
                run = WorkerRun(
                    exit_code=os.waitstatus_to_exitcode(status) if status is not None else None,
                    timed_out=timed_out,
                    wall_seconds=time.monotonic() - start,
                    stderr=read_log(forked.home / "log", job.limits.log_bytes),
                    output_error=drain.output_error(),
                )
                extract(tar, job, run)
            finally:
                shutil.rmtree(forked.home, ignore_errors=True)
        return run


def torch_imported() -> bool:
    """Import torch once, before the fork, for the worker to inherit; False where it is not
    installed (the course, read with its checks, then says what to install)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def fork_worker() -> Forked:
    """Fork a worker on folders of its own; it reads its job from the pipe once it is ready."""
    home = Path(tempfile.mkdtemp(prefix="grader-fork-"))
    submission, out = home / "submission", home / "out"
    submission.mkdir()
    out.mkdir()
    read, write = os.pipe()
    results, stream = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: never returns
        os.close(write)
        os.close(results)
        worker(read, stream, home / "log", submission, out)
    os.close(read)
    os.close(stream)
    return Forked(pid, write, results, home)


def worker(job_fd: int, stream: int, log: Path, submission: Path, out: Path) -> None:
    """In the forked child: the job on stdin, the result stream on stdout, stderr to `log`,
    then the worker."""
    code = WORKER_FAILED
    try:
        os.setsid()
        os.dup2(job_fd, 0)
        os.close(job_fd)
        os.dup2(stream, 1)
        os.close(stream)
        logged = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(logged, 2)
        os.close(logged)
        from sandbox.worker import main

        code = main(["--submission", str(submission), "--out", str(out)])
    except BaseException:  # the worker's own failure: told in its log, as a crash is
        traceback.print_exc()
    finally:
        os._exit(code)


def wait(pid: int, deadline: float, job: WorkerJob, drain: PipeDrain) -> tuple[int | None, bool]:
    """The worker's wait status, or None once it was killed at the deadline (True), stopped or
    over the output cap; its whole session is killed then."""
    pidfd = os.pidfd_open(pid)
    try:
        while not job.stop.is_set() and not drain.overflow.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                kill(pid)
                return None, True
            if select.select([pidfd], [], [], min(0.05, left))[0]:
                return os.waitpid(pid, 0)[1], False
    finally:
        os.close(pidfd)
    kill(pid)
    return None, False


def kill(pid: int) -> None:
    """Kill the worker's session and reap the worker."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
