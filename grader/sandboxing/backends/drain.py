"""A worker's result stream, as every backend reads it: at most a cap of bytes into a file,
then extracted by the strict reader (`ustar.py`) into the job's folder."""

from __future__ import annotations

import os
import threading
from typing import IO

from grader.sandboxing.backends.base import Limits, WorkerJob, WorkerRun
from grader.sandboxing.capped import read_text_capped
from grader.sandboxing.ustar import UnsafeArchiveError, extract_results

MIB = 1 << 20
MAX_MEMBERS = 4096
"""Most files accepted from one worker's output."""
EXTRACT_SECONDS = 60.0
"""Time allowed for reading the result stream, after the worker ended."""


def stdout_cap(limits: Limits) -> int:
    """Bytes of stdout accepted: the output folder's cap plus tar headers for every member."""
    return limits.output_mb * MIB + MAX_MEMBERS * 1024 + MIB


class PipeDrain(threading.Thread):
    """Reads a worker's stdout, the pipe `fd` (its own: closed at the end), to its end: at most
    `cap` bytes into `sink`, then `overflow` is set (and the rest read and dropped)."""

    def __init__(self, fd: int, sink: IO[bytes], cap: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.sink, self.cap = fd, sink, cap
        self.total = 0
        self.overflow = threading.Event()

    def run(self) -> None:
        try:
            while data := os.read(self.fd, 1 << 16):
                room = max(0, self.cap - self.total)
                self.total += len(data)
                if room:
                    self.sink.write(data[:room])
                if self.total > self.cap:
                    self.overflow.set()
        except OSError:  # the pipe broken
            return
        finally:
            os.close(self.fd)

    def output_error(self) -> str | None:
        return f"stdout exceeded {self.cap} bytes" if self.overflow.is_set() else None


def extract(tar: IO[bytes], job: WorkerJob, run: WorkerRun) -> None:
    """Extract a result stream into `job.out_dir`; a rejected stream is noted in `run`."""
    limits = job.limits
    tar.seek(0)
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
        run.stdout = read_text_capped(tar, limits.log_bytes)
