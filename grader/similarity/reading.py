"""A class as the similarity check reads it: the batch `grade` reads (folders, zips, Gradescope
exports, Classroom clones), each submission's Python files in the folder grading reads
(`locate`), as staging selects them within its limits (notebooks as modules), as text. What
cannot be read is left out with a note."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.errors import GraderError
from grader.names import submission_name
from grader.platforms.exports import open_export
from grader.sandboxing.claims import wanted
from grader.sandboxing.locate import locate
from grader.sandboxing.parsetime import too_slow
from grader.sandboxing.staging import from_notebooks, select

if TYPE_CHECKING:
    from grader.courses.catalog import Catalog


@dataclass(frozen=True)
class Candidate:
    """A submission's name, as in the gradebook, its Python files as text, and notes on those
    made of its notebooks."""

    name: str
    sources: dict[str, str]
    made: list[str]


def as_source(name: str, data: bytes) -> tuple[str | None, str | None]:
    """A file's text, or why it is left out: binary, or not UTF-8."""
    if b"\0" in data:
        return None, f"{name}: binary, left out"
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        return None, f"{name}: not UTF-8, left out"


def candidate(path: Path, catalog: Catalog, notes: list[str]) -> Candidate:
    name = submission_name(path)
    chosen = select(locate(path, catalog.entries).folder)
    from_notebooks(chosen, {p.spec.entry: wanted(p.spec) for p in catalog.problems.values()})
    notes += [f"{name}: {note}" for note in chosen.skipped()]
    sources = {}
    for file, data in chosen.files.items():
        text, why = as_source(file, data)
        if (slow := too_slow(data)) is not None:
            text, why = None, f"{file}: {slow}, left out"
        if text is None:
            notes.append(f"{name}: {why}")
        else:
            sources[file] = text
    return Candidate(name, sources, [f"{name}: {note}" for note in chosen.made])


def read_class(path: Path, catalog: Catalog, notes: list[str]) -> list[Candidate]:
    """The submissions in `path`, as `grade` finds them; what is left out goes to `notes`."""
    with open_export(path, catalog) as export:
        notes += [f"Skipped {reason}" for reason in export.skipped] + export.notes
        if not export.submissions:
            raise GraderError(f"no submissions in {path}")
        return [candidate(s.path, catalog, notes) for s in export.submissions]
