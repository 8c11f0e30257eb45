"""Finding the problem files in an upload: at its top, or in the one folder of it that holds
some (Gradescope's upload, Classroom 50's checkout)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grader.sandboxing.notebooks import holds_notebook

IGNORED = {"__MACOSX"}  # what macOS's zip adds beside the real folder
SHOWN = 10  # names of the upload's content listed when no problem file is found


@dataclass(frozen=True)
class Located:
    folder: Path | None  # where the problem files are; None when nowhere
    note: str  # what the candidate is told about it; empty when they are at the top


def holds_problems(folder: Path, entries: set[str]) -> bool:
    """Whether `folder` holds a problem file or a notebook (staging finds them in it)."""
    if any((folder / entry).is_file() for entry in entries):
        return True
    return holds_notebook(folder)


def locate(upload: Path, entries: set[str]) -> Located:
    """The problem files at the top of the upload, or in the one folder of it that holds some."""
    if holds_problems(upload, entries):
        return Located(upload, "")
    folders = [
        d
        for d in sorted(upload.iterdir())
        if d.is_dir()
        and not d.is_symlink()
        and not d.name.startswith(".")
        and d.name not in IGNORED
        and holds_problems(d, entries)
    ]
    if len(folders) == 1:
        return Located(folders[0], f"graded the problem files in the folder {folders[0].name}/")
    example = ", ".join(sorted(entries)[:2])
    if folders:
        names = ", ".join(f"{d.name}/" for d in folders)
        return Located(
            None, f"problem files in several folders ({names}): upload one set ({example}, ...)"
        )
    content = sorted(p.name + "/" * p.is_dir() for p in upload.iterdir())
    listing = ", ".join(content[:SHOWN]) + (", ..." if len(content) > SHOWN else "")
    return Located(
        None,
        f"no problem file found: expected files named after the problems ({example}, ...) at "
        f"the top of the upload or in one folder; it holds: {listing or 'nothing'}",
    )
