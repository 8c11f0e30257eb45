"""Staging: a sanitized copy of a submission for the worker, and its content hash."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILE_BYTES = 1 << 20
MAX_FILES = 200
SKIPPED_DIRS = {"__pycache__", ".git", ".github", ".venv", "node_modules"}
READABLE_FILE, READABLE_DIR = 0o644, 0o755
"""Modes of what the worker reads, set explicitly: it may run as another account."""


@dataclass
class Staged:
    path: Path
    content_hash: str
    notes: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # relative name -> text


def submission_files(source: Path) -> tuple[list[Path], list[str]]:
    """The submission's regular Python files (relative, in hashing order) and notes on the rest."""
    files: list[Path] = []
    notes: list[str] = []
    for folder, dirs, names in os.walk(source, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(f for f in names if f.endswith(".py")):
            path = Path(folder) / name
            relative = path.relative_to(source)
            if path.is_symlink() or not path.is_file():
                notes.append(f"{relative}: not a regular file (links are not followed)")
                continue
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                notes.append(f"{relative}: {size} bytes, over the 1 MiB limit; left out")
                continue
            if len(files) == MAX_FILES:
                notes.append(f"more than {MAX_FILES} Python files; the rest are left out")
                return files, notes
            files.append(relative)
    return files, notes


def _digest_entry(relative: Path, data: bytes) -> bytes:
    return str(relative).encode() + b"\0" + data + b"\0"


def content_hash(source: Path) -> str:
    """The sha256 of what staging would copy: the same value a report's content_hash holds."""
    digest = hashlib.sha256()
    for relative in submission_files(source)[0]:
        digest.update(_digest_entry(relative, (source / relative).read_bytes()))
    return digest.hexdigest()


def stage_submission(source: Path, dest: Path) -> Staged:
    """Copy the submission's regular Python files (no links, at most 1 MiB each) to `dest`,
    readable by every account whatever the umask."""
    digest = hashlib.sha256()
    dest.mkdir(parents=True, exist_ok=True)
    dest.chmod(READABLE_DIR)
    files, notes = submission_files(source)
    sources = {}
    for relative in files:
        data = (source / relative).read_bytes()
        target = dest / relative
        for folder in reversed(relative.parents[:-1]):
            (dest / folder).mkdir(exist_ok=True)
            (dest / folder).chmod(READABLE_DIR)
        target.write_bytes(data)
        target.chmod(READABLE_FILE)
        digest.update(_digest_entry(relative, data))
        sources[str(relative)] = data.decode("utf-8", errors="replace")
    return Staged(dest, digest.hexdigest(), notes, sources)
