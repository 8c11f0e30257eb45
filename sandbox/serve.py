"""Warm serving (`--serve K`): up to K submissions in one container, each cleaned up after.

The worker imports torch once and then grades up to K submissions one after another, each read
from stdin (a header naming its files, the files, then its job), its problems run each in a
child of this process, PID 1 of the container (the kernel drops a signal a child sends it; a
child's `kill(-1)` reaches no other process), the result stream sent to the host in frames (R
ready, D data, E end). Once the submission is done the worker kills every other process of the
container, empties /tmp, /dev/shm and OUT_DIR, removes System V IPC objects and checks that
nothing is left and that its own limits, niceness, I/O priority, affinity and scheduling are
unchanged; it stops (and the host replaces its container) after anything but a clean run.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import math
import os
import resource
import struct
import time
import traceback
from pathlib import Path

import torch
from safetensors.torch import load as load_tensors
from torch import nn

from sandbox.child import run_submission, worker_report
from sandbox.folders import MAX_CLEANUP_ENTRIES, SCRATCH_ROOTS, SUBMISSION_DIR, empty
from sandbox.guard import GUARD, before_forks
from sandbox.processes import kill_all_others, oom_kills, own_state, remove_ipc
from sandbox.protocol import (
    MAX_INDEX_BYTES,
    PROTOCOL_VERSION,
    Files,
    SubmissionEnd,
    SubmissionHeader,
)
from sandbox.records import Part, encode_tensors, read_exact, read_job
from sandbox.stream import FrameWriter, send_frame

MADV_COLLAPSE = 25
HUGE_PAGE = 2 << 20


def read_submission(fd: int) -> tuple[SubmissionHeader, Files] | None:
    """The next submission's header (u64 size, then `SubmissionHeader` JSON) and its files,
    kept in memory (`restore` writes them before each problem); None at the end of the stream."""
    first = os.read(fd, 8)
    if not first:
        return None
    (size,) = struct.unpack("<Q", first + read_exact(fd, 8 - len(first)))
    if size > MAX_INDEX_BYTES:
        raise ValueError(f"submission header of {size} bytes")
    header: SubmissionHeader = json.loads(read_exact(fd, size))
    if header["version"] != PROTOCOL_VERSION:
        raise ValueError(f"submission of protocol {header['version']}, worker {PROTOCOL_VERSION}")
    files: Files = {}
    for entry in header["files"]:
        relative = Path(entry["name"])
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise ValueError(f"unsafe file name {entry['name']!r}")
        files[relative] = read_exact(fd, int(entry["size"]))
    return header, files


def cpu_spent() -> str | None:
    """Whether this worker has used half of its CPU limit (RLIMIT_CPU, which would SIGKILL it
    during some later submission): what it used, if so."""
    limit = resource.getrlimit(resource.RLIMIT_CPU)[0]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    if limit == resource.RLIM_INFINITY or used < limit / 2:
        return None
    return f"the worker used {used:.0f} s of its {limit} s of CPU"


def as_text(entry: str) -> str:
    """A leftover's description as text the host's strict parser takes: the bytes of a name
    that are not UTF-8 (lone surrogates in Python) escaped, at most 300 characters."""
    return entry.encode("utf-8", "backslashreplace").decode("utf-8")[:300]


def leftovers(out: Path) -> list[str]:
    """Whatever of a submission is still here after the clean-up: none, or the container goes."""
    found = [f"process {pid}" for pid in os.listdir("/proc") if pid.isdigit() and pid != "1"]
    found += [f"{root}/{name}" for root in (*SCRATCH_ROOTS, out) for name in os.listdir(root)]
    for kind in ("shm", "sem", "msg"):
        with open(f"/proc/sysvipc/{kind}") as table:
            found += [f"sysv {kind} {line.split()[1]}" for line in table.readlines()[1:]]
    return found


def serve_one(
    header: SubmissionHeader,
    files: Files,
    parts: list[Part],
    from_host: int,
    channel: int,
    out: Path,
) -> bool:
    """Grade one submission, each problem in a child of this process, as PID 1 (a signal from
    a child to this process, its parent, is dropped by the kernel; `kill(-1)` reaches no one
    else), then clean up; False when this container must not serve another (a grader fault,
    a submission over its wall clock, an OOM kill, anything left behind)."""
    state, ooms = own_state(), oom_kills()
    start = time.monotonic()
    code = 0
    try:
        inherited = (from_host, channel)
        sink = FrameWriter(channel)
        run_submission(
            parts, str(SUBMISSION_DIR), files, out, inherited, sink, SCRATCH_ROOTS, container=True
        )
    except Exception:  # the grader's own fault: this container serves no other
        traceback.print_exc()
        code = 70
    finally:
        for part in parts:
            with contextlib.suppress(OSError):  # those of the problems not run
                os.close(part.fd)
    kill_all_others()
    timed_out = time.monotonic() - start > float(header["wall"])
    removed = remove_ipc()
    out.chmod(0o700)
    left: list[str] = []
    for root in (*SCRATCH_ROOTS, out):
        try:
            empty(root, MAX_CLEANUP_ENTRIES)
        except OSError as exc:  # too much to clear, or a mode it cannot undo
            left.append(f"{root}: {exc}")
    left += leftovers(out)
    spent = cpu_spent()
    left += [spent] if spent is not None else []
    changed = own_state() != state
    oom = None if ooms is None else (oom_kills() or 0) - ooms
    clean = code == 0 and not timed_out and not oom and not left and not changed
    ended: SubmissionEnd = {
        "exit_code": code,
        "signal": None,
        "timed_out": timed_out,
        "seconds": round(time.monotonic() - start, 4),
        "oom_kills": oom,
        "ipc_removed": removed,
        "leftovers": [as_text(entry) for entry in left[:20]],
        "state_changed": changed,
        "retire": not clean,
    }
    send_frame(channel, b"E", json.dumps(ended).encode())
    return clean


def warm_up() -> None:
    """Run once, in the worker, what every problem's child would otherwise pay for the first
    time after its fork (lazy imports, kernels' first dispatch): attention, masks, linear
    layers, backward, safetensors. Then freeze the heap, so the children's garbage collector
    leaves the shared pages alone. Only this file's code and the libraries run here."""
    x = torch.randn(2, 5, 16, requires_grad=True)
    attention = nn.MultiheadAttention(16, 2, batch_first=True)
    out, _ = attention(x, x, x)
    q = nn.Linear(16, 48)(x).view(2, 5, 6, 8).transpose(1, 2)
    mask = torch.tril(torch.ones(5, 5)) == 0
    scores = (q @ q.transpose(-2, -1) / math.sqrt(8)).masked_fill(mask, float("-inf"))
    context = nn.Dropout(0.1)(torch.softmax(scores, dim=-1)) @ q
    sdpa = nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    (out.sum() + context.sum() + sdpa.sum()).backward()
    load_tensors(encode_tensors({"out": out.detach().double().contiguous()}))
    GUARD.install()
    before_forks()
    if len(os.listdir("/proc/self/task")) != 1:
        raise RuntimeError("warming up started a thread: forking would not be safe")
    gc.freeze()


def collapse_heap() -> int:
    """Back this process's private writable memory (torch's and Python's heap) with huge pages
    where the kernel can (`MADV_COLLAPSE`, Linux 6.1): a fork then copies, and an exit frees, a
    page table entry per 2 MiB rather than per 4 KiB (a fifth of a problem's child's time on a
    2-core VM). It takes 0.3 s of CPU, which a server's submissions repay; a worker of one
    submission saves less than that (70 ms), and does not. Returns the bytes collapsed; 0
    where the kernel cannot, which changes nothing else."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    collapsed = 0
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if fields[1] != "rw-p" or fields[5:] not in ([], ["[heap]"]):
                continue
            low, high = (int(bound, 16) for bound in fields[0].split("-"))
            start, end = -(-low // HUGE_PAGE) * HUGE_PAGE, high // HUGE_PAGE * HUGE_PAGE
            if end > start and libc.madvise(start, end - start, MADV_COLLAPSE) == 0:
                collapsed += end - start
    return collapsed


def serve(from_host: int, channel: int, out: Path, count: int) -> int:
    """Grade up to `count` submissions read from `from_host`, one after another, each in a
    process forked from this one (torch already imported), which never returns here."""
    if os.getpid() != 1:
        raise SystemExit("--serve runs only as PID 1 of a container: it kills every other process")
    warm_up()
    collapse_heap()
    send_frame(channel, b"R", json.dumps(worker_report()).encode())
    for _ in range(count):
        submission = read_submission(from_host)
        if submission is None:
            return 0
        header, files = submission
        if not serve_one(header, files, read_job(from_host), from_host, channel, out):
            return 0
    return 0
