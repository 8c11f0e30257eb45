"""A strict reader of the worker's result stream: plain ustar, regular files, known names only.

Python's tarfile understands far more than the worker writes (pax and GNU headers, links,
sparse files, base-256 numbers), and some of it costs quadratic time on crafted input
(CVE-2024-6232). This reader accepts only what the worker's `tarfile` writes in USTAR format:
512-byte headers with a valid checksum, the `ustar\\0` `00` magic, type `0`, an ASCII name from
the allowed set and no prefix or link name, octal sizes; then zero blocks to the end. Caps on
member count, per-file and total size are checked before anything is read, and a deadline
bounds the whole extraction.
"""

from __future__ import annotations

import os
import time
from collections.abc import Container
from pathlib import Path
from typing import IO

BLOCK = 512
_CHUNK = 1 << 16
_MAGIC = b"ustar\x0000"
_OCTAL = frozenset(b"01234567")


class UnsafeArchiveError(Exception):
    """The stream broke a cap, ran out of time or held anything but an allowed regular file."""


def extract_results(
    stream: IO[bytes],
    dest: Path,
    allowed: Container[str],
    max_bytes: int,
    max_file_bytes: int,
    max_members: int,
    seconds: float,
) -> None:
    """Extract `stream` into the existing directory `dest`, or raise `UnsafeArchiveError`.

    Files are created with mode 0644 (directories for them 0755), never twice. The stream may
    end at a member boundary (a worker cut short); a member cut short is removed. On error,
    the members extracted before it stay in `dest`.
    """
    deadline = time.monotonic() + seconds
    total = 0
    seen: set[str] = set()
    while True:
        _check_time(deadline)
        block = stream.read(BLOCK)
        if not block:
            return
        if len(block) < BLOCK:
            raise UnsafeArchiveError("the stream ended inside a header")
        if block == bytes(BLOCK):
            _expect_zeros(stream, deadline)
            return
        name, size = parse_header(block)
        if name not in allowed:
            raise UnsafeArchiveError(f"unexpected member {name!r}")
        if name in seen:
            raise UnsafeArchiveError(f"member {name!r} appears twice")
        seen.add(name)
        if len(seen) > max_members:
            raise UnsafeArchiveError(f"more than {max_members} members")
        if size > max_file_bytes:
            raise UnsafeArchiveError(
                f"member {name!r} is {size} bytes, over the {max_file_bytes}-byte file cap"
            )
        total += size
        if total > max_bytes:
            raise UnsafeArchiveError(f"contents exceed the {max_bytes}-byte cap")
        _write_new(dest, name, stream, size, deadline)


def parse_header(block: bytes) -> tuple[str, int]:
    """The name and size a 512-byte ustar header declares for a regular file."""
    stored = _octal(block[148:156], "checksum")
    if stored != sum(block[:148]) + 8 * 0x20 + sum(block[156:]):
        raise UnsafeArchiveError("bad header checksum")
    if block[257:265] != _MAGIC:
        raise UnsafeArchiveError("not a ustar header")
    if block[156:157] != b"0":
        raise UnsafeArchiveError(f"member type {block[156:157]!r} is not a regular file")
    if any(block[157:257]) or any(block[345:500]):
        raise UnsafeArchiveError("link name or name prefix set")
    raw = block[:100].rstrip(b"\0")
    if not raw or b"\0" in raw or not raw.isascii():
        raise UnsafeArchiveError(f"bad member name {raw[:100]!r}")
    return raw.decode("ascii"), _octal(block[124:136], "size")


def _octal(field: bytes, what: str) -> int:
    digits = field.rstrip(b"\0 ")
    if not digits or not set(digits) <= _OCTAL:
        raise UnsafeArchiveError(f"bad {what} field {field!r}")
    return int(digits, 8)


def _expect_zeros(stream: IO[bytes], deadline: float) -> None:
    """After the end-of-archive block only zero padding may follow."""
    while chunk := stream.read(_CHUNK):
        _check_time(deadline)
        if chunk.count(0) != len(chunk):
            raise UnsafeArchiveError("data after the end of the archive")


def _write_new(dest: Path, name: str, stream: IO[bytes], size: int, deadline: float) -> None:
    """Copy exactly `size` bytes (and skip the padding) into a file that must not exist yet."""
    target = dest.joinpath(*name.split("/"))
    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        fd = os.open(target, flags, 0o644)
    except FileExistsError as exc:
        raise UnsafeArchiveError(f"{target} exists already") from exc
    try:
        with os.fdopen(fd, "wb") as out:
            remaining = size + (-size % BLOCK)
            while remaining:
                _check_time(deadline)
                chunk = stream.read(min(_CHUNK, remaining))
                if not chunk:
                    raise UnsafeArchiveError(f"the stream ended inside {name!r}")
                keep = max(0, min(len(chunk), remaining - (-size % BLOCK)))
                out.write(chunk[:keep])
                remaining -= len(chunk)
    except BaseException:
        target.unlink()
        raise


def _check_time(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise UnsafeArchiveError("reading the stream took too long")
