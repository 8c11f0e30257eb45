"""The folders a submission's problems run in: made fresh, reclaimed from a child, emptied, and
the submission's files kept and put back between problems."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sandbox.protocol import Files

SCRATCH_ROOTS = (Path("/tmp"), Path("/dev/shm"))
"""Where a submission in a container can write besides the output folder: emptied before each
of its problems and after it."""
SHARED_ROOTS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))
"""Where any account of a machine can write: a worker running as an account of its own clears
its account's entries there before each problem."""
SUBMISSION_DIR = Path("/tmp/submission")
MAX_CLEANUP_ENTRIES = 100_000
MAX_CLEANUP_DEPTH = 200
"""What the worker clears after a submission at most: beyond, its container is replaced."""


def reclaim(folder: Path) -> None:
    """Make a problem's folder the worker's to write again, whatever its child did to it (a
    mode, a link or a file in its place)."""
    try:
        is_folder = stat.S_ISDIR(os.lstat(folder).st_mode)
    except FileNotFoundError:
        is_folder = False
    if is_folder:
        folder.chmod(0o700)
    else:
        fresh_folder(folder)


def fresh_folder(path: Path) -> None:
    """An empty directory at `path`, whatever an earlier problem left there."""
    remove(path)
    path.mkdir()


def snapshot(root: Path) -> Files:
    """The files under `root` as they are now (links left out)."""
    return {
        path.relative_to(root): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def restore(root: Path, files: Files) -> None:
    """Make `root` hold exactly `files`, whatever an earlier problem of the submission did to
    it (rewrote, added, removed or locked a file, replaced the folder by a link): each problem
    runs on the files handed in, as in a container whose submission is mounted read-only."""
    remove(root)
    root.mkdir(mode=0o755)
    for relative, data in files.items():
        target = root / relative
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o644)


def clear(root: Path, budget: int) -> None:
    """Remove every entry of `root` that this process's account owns (in a folder every account
    writes, as a machine's /tmp, only those; in a container's, all), each emptied within
    `budget` entries (`LeftBehind` past it)."""
    uid = os.getuid()
    for name in os.listdir(root):
        info = os.lstat(root / name)
        if info.st_uid != uid:
            continue
        if stat.S_ISDIR(info.st_mode):
            os.chmod(root / name, 0o700)
            empty(root / name, budget)
            os.rmdir(root / name)
        else:
            os.unlink(root / name)


class LeftBehind(OSError):
    """More than the worker clears up after a submission: its container is replaced."""


def remove(path: Path) -> None:
    """Remove whatever is at `path` (a file, a link, a FIFO, a folder of any modes), if
    anything is."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        os.chmod(path, 0o700)
        empty(path)
        os.rmdir(path)
    else:
        os.unlink(path)


def empty(folder: Path, budget: int | None = None) -> None:
    """Delete everything inside `folder`, whatever modes a submission gave its entries, without
    recursion and by directory descriptors: a deep tree costs what its size costs, not its
    depth squared. With a `budget`, `LeftBehind` past that many entries or
    `MAX_CLEANUP_DEPTH` levels (the worker's own time is bounded, and its container replaced)."""
    top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    stack: list[tuple[int, str, list[str]]] = [(top, "", os.listdir(top))]
    seen = 0
    try:
        while stack:
            fd, name, names = stack[-1]
            if not names:
                stack.pop()
                os.close(fd)
                if stack:
                    os.rmdir(name, dir_fd=stack[-1][0])
                continue
            entry = names.pop()
            seen += 1
            if budget is not None and (seen > budget or len(stack) > MAX_CLEANUP_DEPTH):
                raise LeftBehind(f"more than {budget} entries or {MAX_CLEANUP_DEPTH} levels")
            if stat.S_ISDIR(os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode):
                os.chmod(entry, 0o700, dir_fd=fd)
                child = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                stack.append((child, entry, os.listdir(child)))
            else:
                os.unlink(entry, dir_fd=fd)
    finally:
        for fd, _, _ in stack:
            os.close(fd)
