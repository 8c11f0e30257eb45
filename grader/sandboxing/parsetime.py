"""How long Python's parser takes on a candidate's files, measured where it cannot cost anyone
else: in a process of its own, stopped at a time budget.

Parsing is bounded in size by staging's caps, not in time: a 300 KB file of one f-string with
100,000 fields holds the parser (and the interpreter's lock, which the threads that keep other
submissions' deadlines need) for a minute. Each file is parsed here first, once, in a child
that the host waits for without holding the lock; a file the child has not parsed within the
budget is unreadable, and every host reader of candidate code asks `too_slow` before it parses.
"""

from __future__ import annotations

import hashlib
import select
import struct
import subprocess
import sys
from collections.abc import Mapping

PARSE_SECONDS = 3.0
"""The parser's time a file may take: honest code parses at about 1 MB a second on a loaded
2-core machine (torch's functional.py, 277 KB, in 0.05 to 0.4 s; the 1 MiB cap in about 1 s), a
crafted one quadratically slower (an f-string of 20,000 fields, 60 KB, in 2 s)."""
LENGTH = struct.Struct("<Q")
START_SECONDS = 60.0
"""Time allowed for the parser's process to start (a loaded machine's), not counted in a file's."""
CHILD = """
import ast, struct, sys
length = struct.Struct("<Q")
sys.stdout.buffer.write(b"1")
sys.stdout.buffer.flush()
while header := sys.stdin.buffer.read(8):
    data = sys.stdin.buffer.read(length.unpack(header)[0])
    try:
        ast.parse(data)
    except BaseException:
        pass
    sys.stdout.buffer.write(b"1")
    sys.stdout.buffer.flush()
"""

_slow: dict[str, str] = {}  # digest of a file's bytes -> why the host does not parse it
_fast: set[str] = set()  # digests of the bytes parsed within the budget


def key(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def too_slow(data: bytes | str) -> str | None:
    """Why the host does not parse these bytes (the parser took over its budget on them in
    `screen`), or None."""
    return _slow.get(key(data))


def screen(files: Mapping[str, bytes], budget: float = PARSE_SECONDS) -> dict[str, str]:
    """Parse each file in a child process; those not parsed within `budget` seconds each are
    the host's to leave unparsed from now on. Returns them, with why."""
    found: dict[str, str] = {}
    known = _slow.keys() | _fast
    todo = [(name, data) for name, data in files.items() if key(data) not in known]
    while todo:
        child = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert child.stdin is not None and child.stdout is not None
        try:
            if not select.select([child.stdout], [], [], START_SECONDS)[0]:
                raise RuntimeError("the parser's process did not start")  # the host's fault
            child.stdout.read(1)
            while todo:
                name, data = todo[0]
                child.stdin.write(LENGTH.pack(len(data)) + data)
                child.stdin.flush()
                if not select.select([child.stdout], [], [], budget)[0]:
                    late = f"Python's parser takes over {budget:g} s on it, the grader's limit"
                    _slow[key(data)] = found[name] = late
                    todo.pop(0)
                    break
                if not child.stdout.read(1):  # the parser crashed on it
                    _slow[key(data)] = found[name] = "Python's parser fails on it"
                    todo.pop(0)
                    break
                _fast.add(key(data))
                todo.pop(0)
        finally:
            child.kill()
            child.wait()
            child.stdin.close()
            child.stdout.close()
    for name, data in files.items():
        if name not in found and (why := too_slow(data)) is not None:
            found[name] = why
    return found
