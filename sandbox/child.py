"""A problem's child and the loop that runs one child per problem of a submission."""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import time
from pathlib import Path

import torch

from sandbox.folders import MAX_CLEANUP_ENTRIES, clear, fresh_folder, reclaim, restore
from sandbox.guard import GUARD
from sandbox.probes import describe_error, run_probe
from sandbox.processes import (
    BASELINE,
    deny_exec,
    end_descendants,
    first_to_kill,
    remove_ipc,
    reset_inherited,
    wait_child,
)
from sandbox.protocol import (
    PROTOCOL_VERSION,
    RESULTS_FILE,
    Files,
    ImportStatus,
    ProblemExit,
    WorkerReport,
    sealer,
)
from sandbox.records import Part, append_record, json_bytes, load_part, write_bytes, write_json
from sandbox.stream import Emitter, FrameWriter, PipeWriter


def run_problem(
    parts: list[Part], submission: str, files: Files | None, out: Path, inherited: tuple[int, ...]
) -> None:
    """Child process: import the candidate's entry file and run every probe of one problem,
    the first of `parts` (the parts still open: this one and those of later problems), once
    the worker's own descriptors (`inherited`: the result stream, the host's) are closed and
    the policy guard is armed (`files`: the submission as handed in, None if read-only)."""
    part = parts[0]
    problem, inputs = load_part(part.fd)
    seal = sealer(bytes.fromhex(problem["key"]), part.id, part.job)
    problem["key"] = ""
    for fd in (*inherited, *(p.fd for p in parts)):
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    folder = out / part.id
    for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
        target = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    reset_inherited(BASELINE)
    first_to_kill()
    deny_exec()
    os.chdir(submission)
    home = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # where `sandbox` is
    among_libraries = os.path.join(home, "") in GUARD.libraries  # installed: the libraries' folder
    kept = [p for p in sys.path if p and (among_libraries or os.path.realpath(p) != home)]
    sys.path[:] = [*kept, submission]
    sys.dont_write_bytecode = True
    root = os.path.realpath(submission)
    allowed: dict[str, bytes | None] = {os.path.join(root, n): None for n in part.scope}
    if files is not None:  # a folder the candidate's code can write: as handed in, byte for byte
        handed_in = {str(name): data for name, data in files.items()}
        allowed = {os.path.join(root, n): handed_in[n] for n in part.scope if n in handed_in}
    GUARD.arm(problem["refuse"], root, allowed)
    status: ImportStatus = {"import_error": None, "policy": []}
    try:
        module = importlib.import_module(Path(problem["entry"]).stem)
    except BaseException as exc:  # candidate code may raise anything
        status["import_error"] = describe_error(exc, "import", 0, submission)
    status["policy"] = GUARD.take_events() + GUARD.check(full=False)
    encoded = json_bytes(status)
    write_bytes(folder / "import.json", seal("import", encoded).hex().encode() + b"\n" + encoded)
    if status["import_error"] is not None:
        exit_child(0)
    namespace = vars(module)
    probes = problem["probes"]
    for index, probe in enumerate(probes):
        result, tensors = run_probe(namespace, probe, inputs, "sandbox", submission)
        result["policy"] = GUARD.take_events() + GUARD.check(full=index == len(probes) - 1)
        append_record(folder / RESULTS_FILE, result, tensors, seal, index)
    exit_child(0)


def exit_child(code: int) -> None:
    """Flush what the candidate printed, then leave without running any candidate cleanup."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def worker_report() -> WorkerReport:
    """What this worker is: its protocol version and the torch and Python it runs."""
    return {
        "version": PROTOCOL_VERSION,
        "torch": torch.__version__,
        "python": sys.version.split()[0],
    }


def run_submission(
    parts: list[Part],
    submission: str,
    files: Files | None,
    out: Path,
    inherited: tuple[int, ...],
    sink: PipeWriter | FrameWriter,
    scratch: tuple[Path, ...] = (),
    container: bool = False,
) -> None:
    """Run each problem of the job in a child of its own (which first closes the `inherited`
    descriptors), one after another, on the submission's `files` written anew (None: its
    folder is read-only), and send each problem's files on `sink` as soon as its processes are
    gone, then delete them. The problems share nothing but what the worker hands each: before
    each, whatever the worker's account owns in `out` and in the `scratch` folders is removed
    (in a `container`, System V IPC objects too); a problem whose folders cannot be cleared is
    not run, nor any after it."""
    emitter = Emitter(out, sink)
    write_json(out / "worker.json", worker_report())
    emitter.send(out / "worker.json")
    for index, part in enumerate(parts):
        try:
            out.chmod(0o700)
            for root in (out, *scratch):  # what an earlier problem left (and the worker's own)
                clear(root, MAX_CLEANUP_ENTRIES)
        except OSError:  # too much to clear, or a mode it cannot undo: the rest is not run
            break
        if container:
            remove_ipc()
        if files is not None:
            restore(Path(submission), files)
        folder = out / part.id
        fresh_folder(folder)
        (folder / "started").touch()
        emitter.send(folder / "started")  # from here on, candidate code may have run
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                run_problem(parts[index:], submission, files, out, inherited)
            finally:
                os._exit(70)
        code, sig, timed_out = wait_child(pid, part.timeout)
        strays = end_descendants()
        ended: ProblemExit = {
            "exit_code": code,
            "signal": sig,
            "timed_out": timed_out,
            "seconds": round(time.monotonic() - start, 4),
            "stray_processes": strays,
        }
        reclaim(folder)
        write_json(folder / "exit.json", ended)
        emitter.send_results(folder)
        os.close(part.fd)
    emitter.close()
