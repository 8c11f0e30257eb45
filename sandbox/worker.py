"""The sandbox worker: runs a candidate's code on the probes the host asked for, writes data back.

Usage: python3 -I sandbox/__main__.py --submission SUB_DIR --out OUT_DIR [--clean-scratch]
                                      [--scratch DIR ...] < JOB
       python3 -I sandbox/__main__.py --out OUT_DIR --serve K < SUBMISSIONS   (PID 1 only)

The job arrives on stdin, a pipe: an index (each problem's id, timeout and size), then each
problem's part (its probes as JSON, the tensors they name as safetensors). The worker imports
torch once, splices each part into a memory file of its own without reading it
(`records.py`), then forks one child per problem (`child.py`). A child loads its own part,
closes every other one, sets what it inherited back to the worker's state at its start, gives up
running other programs (a seccomp filter, `processes.py`), arms the policy guard (`guard.py`:
installed once, before any fork), imports the candidate's entry file, runs that problem's probes
(`probes.py`) and appends, per probe, a record to `OUT_DIR/<problem>/results.bin` (its JSON and
its tensors as safetensors, each after its u64 length); its stdout and stderr go to files beside
it. The parent writes `OUT_DIR/worker.json` (versions) first, a `started` marker before each
child, and, once every process the problem started has been killed and reaped, how it ended in
`exit.json`.

The parent streams those files to its stdout as a ustar archive (`stream.py`), each as soon as
it is final, and deletes a problem's files once sent. It is the only process that can write
there: it is not dumpable (no other process of the user can open its /proc files, memory or
descriptors) and every child closes the pipe before any candidate code runs. A submission's
problems share nothing but what the worker hands each: before each, what the worker's account
owns in OUT_DIR and in each `--scratch` folder is removed; with `--clean-scratch` (a
container's worker), in /tmp and /dev/shm too, and every System V IPC object. With
`--serve K` (warm workers, `serve.py`) it grades up to K submissions, one after another.

Nothing here judges anything: the host compares the data with its own reference run. This package
must stay self-contained (stdlib, torch, safetensors): it is the only grader code in the image,
and the host imports it too, to run the reference through the very same probe executor. It
defines every record of the protocol, both ways, once (`protocol.py`).
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
from pathlib import Path

import torch

from sandbox.child import run_submission
from sandbox.folders import SCRATCH_ROOTS, snapshot
from sandbox.processes import BASELINE, cap_address_space, own_state, protect_worker
from sandbox.records import read_job
from sandbox.serve import serve, warm_up
from sandbox.stream import PipeWriter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submission")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument(
        "--clean-scratch",
        action="store_true",
        help="empty /tmp and /dev/shm and remove System V IPC objects before each problem",
    )
    parser.add_argument(
        "--scratch",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="remove the account's entries in DIR before each problem",
    )
    parser.add_argument("--serve", type=int, metavar="K", help="serve up to K submissions")
    parser.add_argument(
        "--memory-mb", type=int, help="address space the candidate's code may map, over torch's"
    )
    args = parser.parse_args(argv)

    BASELINE.update(own_state())
    data_fd = os.dup(1)
    os.dup2(2, 1)
    protect_worker()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as PID 1, a child could otherwise send it
    torch.set_num_threads(1)
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the contract is the CPU's: no GPU for any child
    if args.serve is not None:
        from_host = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        return serve(from_host, data_fd, args.out, args.serve)
    if args.submission is None:
        parser.error("--submission is required without --serve")
    warm_up()  # before the job arrives: a worker started ahead is ready for it
    if args.memory_mb is not None:
        cap_address_space(args.memory_mb)
        BASELINE.update(own_state())  # what each child is set back to
    parts = read_job(0)
    if os.read(0, 1):
        raise ValueError("the job stream is longer than its index says")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    submission = Path(os.path.realpath(args.submission))
    files = snapshot(submission) if os.access(submission, os.W_OK) else None
    scratch = (*(SCRATCH_ROOTS if args.clean_scratch else ()), *args.scratch)
    sink = PipeWriter(data_fd)
    run_submission(
        parts, str(submission), files, args.out, (data_fd,), sink, scratch, args.clean_scratch
    )
    gc.freeze()  # the exit then passes over torch's objects: the host waits 0.3 s less
    return 0


if __name__ == "__main__":
    sys.exit(main())
