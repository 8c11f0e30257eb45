"""Safe extraction of an untrusted, uncompressed tar stream into a host directory."""

from __future__ import annotations

import os
import stat
import tarfile
from pathlib import Path, PurePosixPath
from typing import IO

_CHUNK = 1 << 16


class UnsafeArchiveError(Exception):
    """The stream broke a cap or held a member that may not be extracted."""


def _member_parts(name: str) -> tuple[str, ...]:
    """The path components of a member name, rejecting anything that could escape `dest`."""
    if "\\" in name or "\x00" in name:
        raise UnsafeArchiveError(f"bad character in member name {name!r}")
    path = PurePosixPath(name)
    if path.is_absolute():
        raise UnsafeArchiveError(f"absolute member path {name!r}")
    parts = tuple(p for p in path.parts if p != ".")
    if any(p == ".." for p in parts):
        raise UnsafeArchiveError(f"member path {name!r} contains '..'")
    return parts


def extract_capped(
    stream: IO[bytes], dest: Path, max_bytes: int, max_file_bytes: int, max_members: int
) -> None:
    """Extract `stream` into the existing directory `dest`, or raise `UnsafeArchiveError`.

    Only regular files and directories are accepted (no links, devices or fifos). Caps apply
    to the total and per-file size of the contents and to the number of members. Files are
    created with mode 0644 and directories with 0755, whatever the archive says; a member may
    not replace one already extracted. On error, what was extracted so far stays in `dest`.
    """
    root = dest.resolve(strict=True)
    total = 0
    count = 0
    with _open(stream) as archive:
        try:
            for member in archive:
                count += 1
                if count > max_members:
                    raise UnsafeArchiveError(f"more than {max_members} members")
                parts = _member_parts(member.name)
                if not parts:
                    if member.isdir():
                        continue
                    raise UnsafeArchiveError(f"member {member.name!r} names the root")
                target = root.joinpath(*parts)
                _check_parents(root, parts)
                if member.isdir():
                    if target.exists() and not (target.is_dir() and not target.is_symlink()):
                        raise UnsafeArchiveError(f"directory {member.name!r} clashes")
                    target.mkdir(mode=0o755, parents=True, exist_ok=True)
                elif member.isreg():
                    if member.size > max_file_bytes:
                        raise UnsafeArchiveError(
                            f"member {member.name!r} is {member.size} bytes, over the "
                            f"{max_file_bytes}-byte file cap"
                        )
                    total += member.size
                    if total > max_bytes:
                        raise UnsafeArchiveError(f"contents exceed the {max_bytes}-byte cap")
                    target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
                    source = archive.extractfile(member)
                    if source is None:
                        raise UnsafeArchiveError(f"member {member.name!r} has no data")
                    _write_new(target, source, member.size)
                else:
                    raise UnsafeArchiveError(
                        f"member {member.name!r} is not a regular file or directory"
                    )
        except tarfile.TarError as exc:
            raise UnsafeArchiveError(f"malformed tar stream: {exc}") from exc


def _open(stream: IO[bytes]) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=stream, mode="r|")
    except tarfile.TarError as exc:
        raise UnsafeArchiveError(f"not a tar stream: {exc}") from exc


def _check_parents(root: Path, parts: tuple[str, ...]) -> None:
    """Refuse a member whose parent chain inside `root` holds anything but real directories."""
    current = root
    for part in parts[:-1]:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return
        if not stat.S_ISDIR(mode):
            raise UnsafeArchiveError(f"{current} is not a directory")


def _write_new(target: Path, source: IO[bytes], size: int) -> None:
    """Copy exactly `size` bytes into a file that must not exist yet."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(target, flags, 0o644)
    except FileExistsError as exc:
        raise UnsafeArchiveError(f"{target} is extracted twice") from exc
    with os.fdopen(fd, "wb") as out:
        remaining = size
        while remaining:
            chunk = source.read(min(_CHUNK, remaining))
            if not chunk:
                raise UnsafeArchiveError(f"{target.name}: stream ended inside the file")
            out.write(chunk)
            remaining -= len(chunk)
