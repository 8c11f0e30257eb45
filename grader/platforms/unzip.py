"""Unpacking untrusted zip files: only the wanted regular files, inside the target, within caps."""

from __future__ import annotations

import stat
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from grader.sandbox.capped import read_capped


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

READ_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, RuntimeError)


def member_path(info: zipfile.ZipInfo) -> PurePosixPath:
    """The member's relative path; absolute paths, drives and `..` are refused."""
    path = PurePosixPath(info.filename.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or ":" in info.filename:
        raise UnsafeZip(f"member {info.filename!r} points outside the archive")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise UnsafeZip(f"member {info.filename!r} is a symbolic link")
    return path


def chosen_members(
    infos: list[zipfile.ZipInfo], wanted: Callable[[PurePosixPath], bool], caps: Caps
) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
    """The wanted regular files, once every member passed the path rules and the caps."""
    if len(infos) > caps.members:
        raise UnsafeZip(f"{len(infos)} members, over the cap of {caps.members}")
    chosen = []
    for info in infos:
        path = member_path(info)
        if info.is_dir() or not wanted(path):
            continue
        if info.file_size > caps.file_bytes:
            raise UnsafeZip(f"{info.filename!r} is {info.file_size} bytes, over {caps.file_bytes}")
        chosen.append((info, path))
    total = sum(info.file_size for info, _ in chosen)
    if total > caps.total_bytes:
        raise UnsafeZip(f"{total} bytes uncompressed, over the cap of {caps.total_bytes}")
    return chosen


def extract(archive: Path, dest: Path, wanted: Callable[[PurePosixPath], bool], caps: Caps) -> None:
    """Extract the wanted files of `archive` into `dest` (created), or raise UnsafeZip."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(archive) as zf:
            for info, path in chosen_members(zf.infolist(), wanted, caps):
                target = dest.joinpath(*path.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src:
                    data, more = read_capped(src, caps.file_bytes)
                if more:  # the directory lied about the size
                    raise UnsafeZip(f"{info.filename!r} is over {caps.file_bytes} bytes")
                with target.open("xb") as out:
                    out.write(data)
    except READ_ERRORS as exc:
        raise UnsafeZip(f"not a readable zip file ({exc})") from exc
    except (FileExistsError, NotADirectoryError) as exc:
        raise UnsafeZip("two members have the same path") from exc
