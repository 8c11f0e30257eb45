"""A worker's result stream (`--emit-tar`): a ustar stream its own process writes, each file
once it is final, read into the job's out folder with caps by a strict reader of our own."""

from __future__ import annotations

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
    """Bytes of stdout accepted: the output tmpfs plus tar headers for every member."""
    return limits.output_mb * MIB + MAX_MEMBERS * 1024 + MIB


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
        run.stdout = read_text_capped(tar, limits.log_bytes)
