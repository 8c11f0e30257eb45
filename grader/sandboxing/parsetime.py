"""How long Python's parser takes on a candidate's files, measured where it cannot cost anyone
else: in a process of its own, stopped at a time budget.

Parsing is bounded in size by staging's caps, not in time: a 300 KB file of one f-string with
100,000 fields holds the parser (and the interpreter's lock, which the threads that keep other
submissions' deadlines need) for a minute. Each file is parsed here first, once, in a child
that the host waits for without holding the lock; a file the child has not parsed within the
budget is unreadable, and every host reader of candidate code asks `too_slow` before it parses.
A submission's files together have a budget too: past it, the rest are left out of staging.
"""

from __future__ import annotations

import contextlib
import hashlib
import select
import signal
import struct
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

PARSE_SECONDS = 3.0
"""The parser's CPU time a file may take (its process's, so that a loaded machine does not make
honest code slow): honest code parses at about 2 MB a CPU second (1 MiB of constants in 0.5 s),
a crafted one quadratically slower (an f-string of 20,000 fields, 60 KB, in 2 s)."""
SUBMISSION_SECONDS = 8.0
"""The parser's CPU time all of a submission's files may take together: the host parses each
again (to stage notebooks, to judge, to compare), so one submission of many files each just
within `PARSE_SECONDS` would cost the host minutes. Honest code is far below it (the 4 MiB a
submission may hold parse in about 2 s)."""
WALL_SECONDS = 60.0
"""The wall time a file may take, however loaded the machine: a backstop, the CPU time decides."""
LENGTH = struct.Struct("<Q")
SPENT = struct.Struct("<d")
START_SECONDS = 60.0
"""Time allowed for the parser's process to start (a loaded machine's), not counted in a file's."""
CHILD = f"""
import ast, signal, struct, sys, time
length, spent = struct.Struct("<Q"), struct.Struct("<d")
sys.stdout.buffer.write(b"1")
sys.stdout.buffer.flush()
while header := sys.stdin.buffer.read(8):
    data = sys.stdin.buffer.read(length.unpack(header)[0])
    start = time.process_time()
    signal.setitimer(signal.ITIMER_PROF, {PARSE_SECONDS})  # SIGPROF ends this process
    try:
        ast.parse(data)
    except BaseException:
        pass
    signal.setitimer(signal.ITIMER_PROF, 0)
    sys.stdout.buffer.write(spent.pack(time.process_time() - start))
    sys.stdout.buffer.flush()
"""
"""Parses each file it is sent, within `PARSE_SECONDS` of its CPU time (the kernel's profiling
timer kills it past them), and answers with the CPU seconds it took."""

_slow: dict[str, str] = {}  # digest of a file's bytes -> why the host does not parse it
_fast: dict[str, float] = {}  # digest of the bytes parsed within the budget -> seconds it took


def key(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def too_slow(data: bytes | str) -> str | None:
    """Why the host does not parse these bytes (the parser took over its budget on them in
    `screen`), or None."""
    return _slow.get(key(data))


@dataclass
class Screened:
    """What `screen` found: the files the host never parses, with why (over the budget each,
    for every submission holding those bytes), and those past the submission's budget for all
    its files together, which staging leaves out."""

    slow: dict[str, str] = field(default_factory=dict)
    over: list[str] = field(default_factory=list)


class Parser:
    """Python's parser in a process of its own, started when first needed."""

    def __init__(self) -> None:
        self.child: subprocess.Popen[bytes] | None = None

    def seconds(self, data: bytes) -> float | str:
        """The parser's CPU time on `data`, or why it has none within `PARSE_SECONDS` (the
        child is then ended: the next file gets a new one)."""
        child = self.child or self.start()
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(LENGTH.pack(len(data)) + data)
        child.stdin.flush()
        late = f"Python's parser takes over {PARSE_SECONDS:g} s on it, the grader's limit"
        if not select.select([child.stdout], [], [], WALL_SECONDS)[0]:
            self.close()
            return late
        answer = child.stdout.read(SPENT.size)
        if len(answer) < SPENT.size:  # it ended: past its CPU time, or the parser crashed
            ended = child.wait()
            self.close()
            return late if ended == -signal.SIGPROF else "Python's parser fails on it"
        return float(SPENT.unpack(answer)[0])

    def start(self) -> subprocess.Popen[bytes]:
        child = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.child = child
        assert child.stdout is not None
        if not select.select([child.stdout], [], [], START_SECONDS)[0]:
            self.close()
            raise RuntimeError("the parser's process did not start")  # the host's fault
        child.stdout.read(1)
        return child

    def close(self) -> None:
        child, self.child = self.child, None
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            child.wait()
            for pipe in (child.stdin, child.stdout):
                if pipe is not None:
                    pipe.close()


def screen(files: Mapping[str, bytes], total: float = SUBMISSION_SECONDS) -> Screened:
    """Parse each file, in order, in a child process: one not parsed within `PARSE_SECONDS` of
    CPU time is the host's to leave unparsed from now on; once the files parsed in time have
    taken `total` seconds together (bytes parsed before counted at their time then), the rest
    are over."""
    found = Screened()
    spent = 0.0
    parser = Parser()
    try:
        for name, data in files.items():
            digest = key(data)
            if spent > total:
                found.over.append(name)
                continue
            if digest not in _slow and digest not in _fast:
                took = parser.seconds(data)
                if isinstance(took, str):
                    _slow[digest] = took
                else:
                    _fast[digest] = took
            if digest in _slow:
                found.slow[name] = _slow[digest]
            else:
                spent += _fast[digest]
    finally:
        parser.close()
    return found
