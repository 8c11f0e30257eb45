"""Finding the problem files in a submission: at its top, or in the one folder of it that holds
some (a candidate who zipped or uploaded their folder). Every path that grades or compares a
submission reads that folder: `grade` in each input form, `gradescope run`, `classroom50 run`,
`similarity`."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from grader.sandboxing.notebooks import holds_notebook

IGNORED = {"__MACOSX"}  # what macOS's zip adds beside the real folder
SHOWN = 10  # names of the submission's content listed when no problem file is found


@dataclass(frozen=True)
class Located:
    folder: Path  # where the problem files are; the submission's top when they are nowhere
    note: str  # what the candidate is told about it; empty when they are at the top


def holds_problems(folder: Path, entries: Collection[str]) -> bool:
    """Whether `folder` holds a problem file or a notebook (staging finds them in it)."""
    if any((folder / entry).is_file() for entry in entries):
        return True
    return holds_notebook(folder)


def locate(submission: Path, entries: Collection[str]) -> Located:
    """The problem files at the top of the submission, or in the one folder of it that holds
    some; the top, with a note on what was expected, when there are none or several, or
    without one when the submission cannot be read (staging says what it could not read)."""
    try:
        return search(submission, entries)
    except OSError:
        return Located(submission, "")


def search(submission: Path, entries: Collection[str]) -> Located:
    if holds_problems(submission, entries):
        return Located(submission, "")
    folders = [
        d
        for d in sorted(submission.iterdir())
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
            submission,
            f"problem files in several folders ({names}): hand in one set ({example}, ...)",
        )
    content = sorted(p.name + "/" * p.is_dir() for p in submission.iterdir())
    listing = ", ".join(content[:SHOWN]) + (", ..." if len(content) > SHOWN else "")
    return Located(
        submission,
        f"no problem file found: expected files named after the problems ({example}, ...) at "
        f"the top of the submission or in one folder; it holds: {listing or 'nothing'}",
    )
