"""Unpacking untrusted zip files: only the wanted regular files, inside the target, within caps.

A wanted member whose path the file system could not hold (a name over `MAX_NAME_BYTES`, a path
over `MAX_PATH_BYTES` or `MAX_DEPTH` levels) is left out with a note; staging has tighter limits
of its own, and notes them in the report.
"""

from __future__ import annotations

import stat
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from grader.sandboxing.capped import read_capped


class UnsafeZip(ValueError):
    """An archive that is not a readable zip, or that the path rules or the caps refuse."""


@dataclass(frozen=True)
class Caps:
    """What an archive may hold, checked on its directory before anything is extracted."""

    members: int
    file_bytes: int
    total_bytes: int


STUDENT = Caps(members=2_000, file_bytes=1 << 20, total_bytes=32 << 20)
CLASS = Caps(members=200_000, file_bytes=1 << 20, total_bytes=512 << 20)

READ_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    EOFError,
    RuntimeError,  # also NotImplementedError: a compression method zipfile does not know
    UnicodeDecodeError,  # a member name flagged UTF-8 that is not
)
MAX_NAME_BYTES = 255  # a file's or folder's name: what Linux file systems hold
MAX_PATH_BYTES = 1024  # a member's path, UTF-8
MAX_DEPTH = 64  # folders in a member's path


def member_path(info: zipfile.ZipInfo) -> PurePosixPath:
    """The member's relative path; absolute paths, drives and `..` are refused."""
    path = PurePosixPath(info.filename.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or ":" in info.filename:
        raise UnsafeZip(f"member {shown(info.filename)} points outside the archive")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise UnsafeZip(f"member {shown(info.filename)} is a symbolic link")
    return path


def path_limit(path: PurePosixPath) -> str | None:
    """Which limit a member's path breaks, if any: the file system could not hold it."""
    if len(path.parts) > MAX_DEPTH + 1:
        return f"over {MAX_DEPTH} folders deep"
    if any(len(part.encode()) > MAX_NAME_BYTES for part in path.parts):
        return f"a name in its path is over {MAX_NAME_BYTES} bytes"
    if len(str(path).encode()) > MAX_PATH_BYTES:
        return f"its path is over {MAX_PATH_BYTES} bytes"
    return None


def shown(name: str) -> str:
    """A member's name as a note shows it: quoted, at most 60 characters."""
    return repr(name if len(name) <= 60 else name[:57] + "...")


@dataclass
class Chosen:
    """The members to extract, and notes on the wanted ones left out."""

    members: list[tuple[zipfile.ZipInfo, PurePosixPath]]
    notes: list[str]


def chosen_members(
    infos: list[zipfile.ZipInfo], wanted: Callable[[PurePosixPath], bool], caps: Caps
) -> Chosen:
    """The wanted regular files the file system can hold, once every member passed the path
    rules and the caps."""
    if len(infos) > caps.members:
        raise UnsafeZip(f"{len(infos)} members, over the cap of {caps.members}")
    chosen = Chosen([], [])
    for info in infos:
        path = member_path(info)
        if info.is_dir() or not wanted(path):
            continue
        if info.file_size > caps.file_bytes:
            raise UnsafeZip(
                f"{shown(info.filename)} is {info.file_size} bytes, over {caps.file_bytes}"
            )
        why = path_limit(path)
        if why is None:
            chosen.members.append((info, path))
        else:
            chosen.notes.append(f"member {shown(info.filename)} left out: {why}")
    total = sum(info.file_size for info, _ in chosen.members)
    if total > caps.total_bytes:
        raise UnsafeZip(f"{total} bytes uncompressed, over the cap of {caps.total_bytes}")
    return chosen


def extract(
    archive: Path, dest: Path, wanted: Callable[[PurePosixPath], bool], caps: Caps
) -> list[str]:
    """Extract the wanted files of `archive` into `dest` (created), or raise UnsafeZip; notes
    on the wanted members left out."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(archive) as zf:
            chosen = chosen_members(zf.infolist(), wanted, caps)
            for info, path in chosen.members:
                target = dest.joinpath(*path.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src:
                    data, more = read_capped(src, caps.file_bytes)
                if more:  # the directory lied about the size
                    raise UnsafeZip(f"{shown(info.filename)} is over {caps.file_bytes} bytes")
                with target.open("xb") as out:
                    out.write(data)
    except READ_ERRORS as exc:
        raise UnsafeZip(f"not a readable zip file ({exc})") from exc
    except (FileExistsError, NotADirectoryError) as exc:
        raise UnsafeZip("two members have the same path") from exc
    return chosen.notes
