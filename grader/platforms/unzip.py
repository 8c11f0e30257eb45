"""Unpacking untrusted zip files: only the wanted regular files, inside the target, within caps.

A wanted member whose path the file system could not hold (a name over `MAX_NAME_BYTES`, a path
over `MAX_PATH_BYTES` or `MAX_DEPTH` levels) is left out with a note; staging has tighter limits
of its own, and notes them in the report. A wanted member the rules refuse (a link, a path
outside or taken, a file over the cap) refuses a student's zip; in a class's archive, only its
student's folder, which is left out with a note, and each student's folder has a student zip's
caps. A member not wanted is never extracted, whatever it is.
"""

from __future__ import annotations

import re
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
CLASS = Caps(members=200_000, file_bytes=10 << 20, total_bytes=512 << 20)
"""A class's archive, each student's folder in it held to `STUDENT`'s caps (10 MiB a file: the
export's metadata)."""

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
DRIVE = re.compile(r"[A-Za-z]:$")  # a Windows drive (`C:`); a colon elsewhere is a name's


def member_path(info: zipfile.ZipInfo) -> PurePosixPath:
    """The member's relative path; absolute paths, drives and `..` are refused."""
    path = PurePosixPath(info.filename.replace("\\", "/"))
    drive = DRIVE.match(path.parts[0]) is not None if path.parts else False
    if path.is_absolute() or drive or ".." in path.parts:
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
    """The members to extract, notes on the wanted ones left out, and (a class's archive) the
    students' folders left out, with why."""

    members: list[tuple[zipfile.ZipInfo, PurePosixPath]]
    notes: list[str]
    refused: dict[str, str]


def chosen_members(
    infos: list[zipfile.ZipInfo],
    wanted: Callable[[PurePosixPath], bool],
    caps: Caps,
    owned: Caps | None = None,
) -> Chosen:
    """The wanted regular files the file system can hold, once every wanted member passed the
    path rules and the caps. With `owned` (a class's archive), a member in a student's folder
    is held to `owned`'s caps, and one that breaks a rule costs only that folder, left out with
    a note; as does a folder over `owned`'s caps of its own."""
    if len(infos) > caps.members:
        raise UnsafeZip(f"{len(infos)} members, over the cap of {caps.members}")
    owner = owner_of(infos) if owned is not None else lambda _: None
    chosen = Chosen([], [], {})
    taken = Taken()
    for info in infos:
        if info.is_dir() or not wanted(PurePosixPath(info.filename.replace("\\", "/"))):
            continue  # never extracted, whatever it is
        student = owner(info)
        limit = caps.file_bytes if owned is None or student is None else owned.file_bytes
        try:
            path = member_path(info)
            if info.file_size > limit:
                raise UnsafeZip(f"{shown(info.filename)} is {info.file_size} bytes, over {limit}")
            taken.add(info, path)
        except UnsafeZip as exc:
            if student is None:
                raise
            chosen.refused.setdefault(student, str(exc))
            continue
        why = path_limit(path)
        if why is None:
            chosen.members.append((info, path))
        else:
            chosen.notes.append(f"member {shown(info.filename)} left out: {why}")
    if owned is not None:
        chosen.refused.update(over_caps(chosen.members, owner, owned, chosen.refused))
        chosen.members = [(i, p) for i, p in chosen.members if owner(i) not in chosen.refused]
        chosen.notes += [f"{shown(o)} left out: {why}" for o, why in sorted(chosen.refused.items())]
    total = sum(info.file_size for info, _ in chosen.members)
    if total > caps.total_bytes:
        raise UnsafeZip(f"{total} bytes uncompressed, over the cap of {caps.total_bytes}")
    return chosen


class Taken:
    """The paths of the members chosen so far: a member may not take a path one of them has,
    as a file or as a folder."""

    def __init__(self) -> None:
        self.files: set[PurePosixPath] = set()
        self.folders: set[PurePosixPath] = set()

    def add(self, info: zipfile.ZipInfo, path: PurePosixPath) -> None:
        parents = set(path.parents)
        if path in self.files or path in self.folders or parents & self.files:
            raise UnsafeZip(f"member {shown(info.filename)} has the path of another")
        self.files.add(path)
        self.folders |= parents


def owner_of(infos: list[zipfile.ZipInfo]) -> Callable[[zipfile.ZipInfo], str | None]:
    """Whose a member of a class's archive is: the student's folder at the archive's top, or
    in its one folder (`zip -r class.zip class/`, Gradescope's export), leaving aside what
    archivers and file managers add there (`__MACOSX/`, dot files) and the files there; None
    for a member in no student's folder (the export's metadata)."""
    parts = [components(info) for info in infos]
    tops = {p[0] for p in parts if len(p) > 1 and p[0] != "__MACOSX" and not p[0].startswith(".")}
    depth = 2 if len(tops) == 1 else 1

    def owner(info: zipfile.ZipInfo) -> str | None:
        path = components(info)
        return "/".join(path[:depth]) if len(path) > depth else None

    return owner


def components(info: zipfile.ZipInfo) -> list[str]:
    """The names along a member's path, as written (either slash, a leading one dropped)."""
    return info.filename.replace("\\", "/").lstrip("/").split("/")


def over_caps(
    members: list[tuple[zipfile.ZipInfo, PurePosixPath]],
    owner: Callable[[zipfile.ZipInfo], str | None],
    caps: Caps,
    refused: dict[str, str],
) -> dict[str, str]:
    """The students' folders whose chosen members break `caps` (their number, their size)."""
    counts: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for info, _ in members:
        student = owner(info)
        if student is not None:
            counts[student] = counts.get(student, 0) + 1
            sizes[student] = sizes.get(student, 0) + info.file_size
    over: dict[str, str] = {}
    for student, count in counts.items():
        if student in refused:
            continue
        if count > caps.members:
            over[student] = f"{count} files, over the cap of {caps.members}"
        elif (size := sizes[student]) > caps.total_bytes:
            over[student] = f"{size} bytes uncompressed, over the cap of {caps.total_bytes}"
    return over


def extract(
    archive: Path,
    dest: Path,
    wanted: Callable[[PurePosixPath], bool],
    caps: Caps,
    owned: Caps | None = None,
) -> Chosen:
    """Extract the wanted files of `archive` into `dest` (created), or raise UnsafeZip; what
    was extracted, and what left out (`owned`: as `chosen_members`)."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(archive) as zf:
            chosen = chosen_members(zf.infolist(), wanted, caps, owned)
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
    return chosen
