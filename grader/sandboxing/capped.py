"""Reading untrusted bytes with a cap: never more than the cap (and one byte to tell whether
there was more) is read, whatever a file's size said when it was checked."""

from __future__ import annotations

from pathlib import Path
from typing import IO

TRUNCATED = "\n[... truncated]"


def read_capped(stream: IO[bytes], limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of `stream`, and whether it held more."""
    data = stream.read(limit + 1)
    return data[:limit], len(data) > limit


def read_file_capped(path: Path, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of the file at `path`, and whether it held more."""
    with path.open("rb") as handle:
        return read_capped(handle, limit)


def read_text_capped(stream: IO[bytes], limit: int) -> str:
    """Text of at most `limit` bytes of `stream` (a log), marked as truncated if it held more."""
    data, more = read_capped(stream, limit)
    return data.decode("utf-8", errors="replace") + (TRUNCATED if more else "")


def read_log(path: Path, limit: int) -> str:
    """A log file as text, as `read_text_capped` reads it."""
    with path.open("rb") as handle:
        return read_text_capped(handle, limit)
