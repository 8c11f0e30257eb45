"""Staging: a sanitized copy of a submission for the worker, and its content hash."""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILE_BYTES = 1 << 20
MAX_FILES = 200
SKIPPED_DIRS = {"__pycache__", ".git", ".github", ".venv", "node_modules"}


@dataclass
class Staged:
    path: Path
    content_hash: str
    notes: list[str] = field(default_factory=list)


def stage_submission(source: Path, dest: Path) -> Staged:
    """Copy the submission's regular Python files (no links, at most 1 MiB each) to `dest`."""
    digest = hashlib.sha256()
    notes: list[str] = []
    dest.mkdir(parents=True, exist_ok=True)
    count = 0
    for folder, dirs, files in os.walk(source, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(f for f in files if f.endswith(".py")):
            path = Path(folder) / name
            relative = path.relative_to(source)
            if path.is_symlink() or not path.is_file():
                notes.append(f"{relative}: not a regular file (links are not followed)")
                continue
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                notes.append(f"{relative}: {size} bytes, over the 1 MiB limit; left out")
                continue
            count += 1
            if count > MAX_FILES:
                notes.append(f"more than {MAX_FILES} Python files; the rest are left out")
                return Staged(dest, digest.hexdigest(), notes)
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return Staged(dest, digest.hexdigest(), notes)
