"""The fork backend: the worker as a fork of the grader's own process. NO boundary at all.

For a candidate's `grader check` of their own code on their own machine, where nothing needs
keeping from the candidate: the worker starts with torch already imported (the grader imported
it for the reference), so a check costs about one import of torch instead of two. The worker
is the sandbox's own (`sandbox.worker.main`): the same children per problem, the same policy
guard armed in each, the same records read back through the same caps as the local backend's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import time
import traceback
from pathlib import Path

from grader.sandboxing.backends.base import (
    BackendName,
    Isolation,
    WorkerJob,
    WorkerRun,
    feed,
)
from grader.sandboxing.backends.local import copy_results
from grader.sandboxing.capped import read_log

WORKER_FAILED = 70


class ForkBackend:
    """Runs the worker in a fork of this process, in a session of its own."""

    name = BackendName.fork
    isolation = Isolation.process

    def describe(self) -> dict[str, str]:
        import torch  # imported once grading needs it: a course read without it says so

        return {"backend": self.name, "torch": torch.__version__}

    def close(self) -> None:
        """Nothing is kept between runs."""

    def run(self, job: WorkerJob) -> WorkerRun:
        with tempfile.TemporaryDirectory(prefix="grader-fork-") as tmp:
            home = Path(tmp)
            out, log = home / "out", home / "log"
            out.mkdir()
            read, write = os.pipe()
            start = time.monotonic()
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                os.close(write)
                worker(read, log, job.submission_dir, out)
            os.close(read)
            feed(lambda data: os.write(write, data), job.job, lambda: os.close(write))
            status, timed_out = wait(pid, start + job.limits.wall_seconds, job)
            copy_results(out, job.out_dir, job.outputs, job.limits.output_mb << 20)
            text = read_log(log, job.limits.log_bytes)
        return WorkerRun(
            exit_code=os.waitstatus_to_exitcode(status) if status is not None else None,
            timed_out=timed_out,
            wall_seconds=time.monotonic() - start,
            stderr=text,
        )


def worker(job_fd: int, log: Path, submission: Path, out: Path) -> None:
    """In the forked child: the job on stdin, stdout and stderr to `log`, then the worker."""
    code = WORKER_FAILED
    try:
        os.setsid()
        os.dup2(job_fd, 0)
        os.close(job_fd)
        logged = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(logged, 1)
        os.dup2(logged, 2)
        os.close(logged)
        from sandbox.worker import main

        code = main(["--submission", str(submission), "--out", str(out)])
    except BaseException:  # the worker's own failure: told in its log, as a crash is
        traceback.print_exc()
    finally:
        os._exit(code)


def wait(pid: int, deadline: float, job: WorkerJob) -> tuple[int | None, bool]:
    """The worker's wait status, or None once it was killed at the deadline (True) or stopped;
    its whole session is killed then."""
    while not job.stop.is_set():
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, False
        if time.monotonic() > deadline:
            kill(pid)
            return None, True
        time.sleep(0.005)
    kill(pid)
    return None, False


def kill(pid: int) -> None:
    """Kill the worker's session and reap the worker."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
