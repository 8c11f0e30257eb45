"""Staging: a sanitized copy of a submission for the worker, and its content hash.

The submission's tree is the candidate's: it is walked with a stack (never recursion), and every
limit is checked on names and sizes before a byte of a file is read. What a limit leaves out is
noted with the limit, and a problem whose entry file was left out says which.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from grader.sandboxing.capped import read_file_capped
from grader.sandboxing.claims import Wanted
from grader.sandboxing.notebooks import (
    MAX_CELLS_BYTES,
    MAX_NOTEBOOK_BYTES,
    NOTEBOOK,
    Converted,
    bound_names,
    defines,
    module_for,
    notebook_module,
    without_outputs,
)
from grader.sandboxing.parsetime import SUBMISSION_SECONDS, screen
from grader.sandboxing.served import serve

MAX_FILE_BYTES = 1 << 20
MAX_FILES = 200
MAX_TOTAL_BYTES = 4 << 20
"""The most the staged files of a submission hold together (the sandbox sizes its /tmp from it)."""
MAX_NOTEBOOKS_BYTES = 64 << 20  # the notebooks' files together, their outputs included
MAX_DEPTH = 16  # folders below the submission's own
MAX_NAME_BYTES = 100  # a file's or folder's name, UTF-8
MAX_PATH_BYTES = 200  # a file's path in the submission, UTF-8
MAX_ENTRIES = 10_000  # files and folders looked at in all
MAX_NOTES = 10  # what was left out, listed one by one; the rest are counted
MAX_OTHERS = 50  # names of files that are not Python, kept for did-you-mean feedback
SKIPPED_DIRS = {"__pycache__", ".git", ".github", ".venv", "node_modules"}
READABLE_FILE, READABLE_DIR = 0o644, 0o755
"""Modes of what the worker reads, set explicitly: it may run as another account."""


@dataclass
class Staged:
    path: Path
    content_hash: str
    notes: list[str] = field(default_factory=list)
    sources: dict[str, bytes] = field(default_factory=dict)  # relative name -> raw bytes
    left_out: dict[str, str] = field(default_factory=dict)  # Python file -> the limit
    unread: str | None = None  # why part of the submission was never looked at
    others: list[str] = field(default_factory=list)  # files that are not Python, by path
    notebooks: dict[str, list[str]] = field(default_factory=dict)
    """The modules made of notebooks, each with the classes and functions its cells define."""


@dataclass(frozen=True)
class Read:
    """A notebook read as a module: its file's name, and what was made of its cells."""

    name: str
    converted: Converted


@dataclass
class Selection:
    """What staging takes of a submission: its Python files in hashing order, with their
    bytes, and what it left out, with the limit that did."""

    files: dict[str, bytes] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)
    folders: list[str] = field(default_factory=list)  # folders left out, as notes
    unread: str | None = None
    others: list[str] = field(default_factory=list)
    made: list[str] = field(default_factory=list)  # what was made of notebooks, as notes
    notebooks: dict[str, Read] = field(default_factory=dict)  # the modules made of them
    total: int = 0
    entries: int = 0
    notebook_bytes: int = 0  # the notebooks' files read
    cells_bytes: int = 0  # their JSON without outputs: what nbformat read

    def skipped(self) -> list[str]:
        """One note per thing left out, the first `MAX_NOTES` of them; then how many more, and
        what was never looked at."""
        every = [f"{shown(r)}: {why}; left out" for r, why in self.left_out.items()]
        every += self.folders
        notes = every[:MAX_NOTES]
        if len(every) > MAX_NOTES:
            notes.append(f"{len(every) - MAX_NOTES} more left out")
        return notes + ([self.unread] if self.unread else [])

    def notes(self) -> list[str]:
        """What was left out, then what was made of notebooks."""
        return self.skipped() + self.made


def shown(relative: str) -> str:
    """A path as a note shows it: at most 60 characters."""
    return relative if len(relative) <= 60 else relative[:57] + "..."


def display(relative: str) -> str:
    """A relative path as text, bytes that are not UTF-8 as `\\xNN` escapes."""
    return relative.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def name_limit(name: str, relative: str) -> str | None:
    """Which limit the name of a file or folder (at `relative`) breaks, if any."""
    try:
        size = len(relative.encode("utf-8"))
    except UnicodeEncodeError:  # bytes Python could not decode
        return "its name is not UTF-8"
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"its name is over {MAX_NAME_BYTES} bytes"
    if size > MAX_PATH_BYTES:
        return f"its path is over {MAX_PATH_BYTES} bytes"
    return None


def listing(folder: Path, chosen: Selection) -> list[os.DirEntry[str]]:
    """The folder's entries, sorted by name, within what is left of `MAX_ENTRIES`."""
    room = MAX_ENTRIES - chosen.entries
    with os.scandir(folder) as scan:
        entries = list(itertools.islice(scan, room + 1))
    if len(entries) > room:
        entries = entries[:room]
        chosen.unread = f"over {MAX_ENTRIES} files and folders: the rest were not looked at"
    chosen.entries += len(entries)
    return sorted(entries, key=lambda e: e.name)


def file_limit(
    entry: os.DirEntry[str], relative: str, chosen: Selection, notebook: bool = False
) -> str | None:
    """Which limit leaves a Python file (or a notebook) out, checked before it is read; None to
    read it."""
    why = name_limit(entry.name, relative)
    if why is not None:
        return why
    if not entry.is_file(follow_symlinks=False):
        return "not a regular file (links are not followed)"
    if len(chosen.files) == MAX_FILES:
        return f"over the limit of {MAX_FILES} Python files"
    size = entry.stat(follow_symlinks=False).st_size
    most, kind = (MAX_NOTEBOOK_BYTES, "notebook") if notebook else (MAX_FILE_BYTES, "file")
    if size > most:
        return f"{size} bytes, over the {most >> 20} MiB limit per {kind}"
    total, most, kind = (chosen.total, MAX_TOTAL_BYTES, "files")
    if notebook:
        total, most, kind = (chosen.notebook_bytes, MAX_NOTEBOOKS_BYTES, "notebooks")
    if total + size > most:
        return f"over the {most >> 20} MiB limit for all {kind} together"
    return None


def take_notebook(entry: os.DirEntry[str], module: str, chosen: Selection) -> None:
    """A notebook in the submission's top folder, as the module `module` of its code cells
    (read without their outputs); a limit or bytes that are no notebook are noted."""
    why = file_limit(entry, entry.name, chosen, notebook=True)
    data, more = (b"", True) if why else read_file_capped(Path(entry.path), MAX_NOTEBOOK_BYTES)
    chosen.notebook_bytes += len(data)
    cells = None if why or more else without_outputs(data)
    converted = None
    if cells is not None and len(cells) > MAX_CELLS_BYTES:
        why = f"its cells, outputs left out, are over {MAX_CELLS_BYTES >> 20} MiB"
    elif cells is not None and chosen.cells_bytes + len(cells) > MAX_CELLS_BYTES:
        why = f"its cells and those of the notebooks before it are over {MAX_CELLS_BYTES >> 20} MiB"
    elif cells is not None:
        chosen.cells_bytes += len(cells)
        converted = notebook_module(cells)
    if converted is None or chosen.total + len(converted.source) > MAX_TOTAL_BYTES:
        chosen.others.append(display(entry.name))
        if not why and more:
            why = "it grew past the limits as it was read"
        elif not why:
            total = f"over the {MAX_TOTAL_BYTES >> 20} MiB limit for all files together"
            why = "no notebook nbformat can read" if converted is None else total
        chosen.left_out[display(entry.name)] = why
        return
    chosen.files[module] = converted.source
    chosen.total += len(converted.source)
    chosen.notebooks[module] = Read(display(entry.name), converted)


def take_file(entry: os.DirEntry[str], relative: str, chosen: Selection) -> None:
    """Read a Python file into `chosen`, or note which limit leaves it out."""
    why = file_limit(entry, relative, chosen)
    if why is None:
        data, more = read_file_capped(Path(entry.path), MAX_FILE_BYTES)
        if not more and chosen.total + len(data) <= MAX_TOTAL_BYTES:
            chosen.files[relative] = data
            chosen.total += len(data)
            return
        why = "it grew past the limits as it was read"
    chosen.left_out[display(relative)] = why


def notebook_for(entry: os.DirEntry[str], taken: set[str]) -> str | None:
    """The module to take `entry` as, if it is a notebook (a file) whose name no Python file
    beside it has (`module_for`)."""
    if not entry.name.endswith(NOTEBOOK) or not entry.is_file(follow_symlinks=False):
        return None
    return module_for(entry.name, taken)


def folder_limit(entry: os.DirEntry[str], relative: str, depth: int) -> str | None:
    """Why a folder is not walked: None to walk it, "" to skip it without a note."""
    if entry.name in SKIPPED_DIRS or entry.name.startswith("."):
        return ""
    if not entry.is_dir(follow_symlinks=False):
        return ""  # a link to a folder: not followed
    why = name_limit(entry.name, relative)
    if why is None and depth > MAX_DEPTH:
        why = f"over {MAX_DEPTH} folders deep"
    return why


def select(source: Path) -> Selection:
    """Walk the submission (depth first, files before sub-folders, each sorted by name) and
    take what the limits let in; the Python it takes (its notebooks' modules too) is parsed
    once in a process of its own (`parsetime.screen`) before the host parses any of it."""
    chosen = Selection()
    stack: list[tuple[Path, str, int]] = [(source, "", 0)]
    while stack and chosen.unread is None:
        folder, prefix, depth = stack.pop()
        try:
            entries = listing(folder, chosen)
        except OSError as exc:
            if not prefix:
                chosen.unread = f"the submission's folder is unreadable ({exc.strerror})"
                break
            chosen.folders.append(f"folder {shown(display(prefix))}: unreadable ({exc.strerror})")
            continue
        folders = []
        taken = {entry.name for entry in entries}
        for entry in entries:
            relative = prefix + entry.name
            try:
                if entry.name.endswith(".py") and not entry.is_dir(follow_symlinks=False):
                    take_file(entry, relative, chosen)
                elif not prefix and (module := notebook_for(entry, taken)):
                    taken.add(module)
                    take_notebook(entry, module, chosen)
                elif not entry.is_dir(follow_symlinks=False):
                    if len(chosen.others) < MAX_OTHERS:
                        chosen.others.append(display(relative))
                elif (why := folder_limit(entry, relative, depth + 1)) is None:
                    folders.append((Path(entry.path), relative + "/", depth + 1))
                elif why:
                    chosen.folders.append(f"folder {shown(display(relative))}: {why}; left out")
            except OSError as exc:
                chosen.left_out[display(relative)] = f"unreadable ({exc.strerror})"
        stack.extend(reversed(folders))
    leave_over_budget(chosen, screen(chosen.files, total=SUBMISSION_SECONDS).over)
    return chosen


def leave_over_budget(chosen: Selection, over: list[str]) -> None:
    """Leave out the files after those that took the parser the submission's budget."""
    why = f"Python's parser took over {SUBMISSION_SECONDS:g} s on the files before it together"
    for relative in over:
        chosen.total -= len(chosen.files.pop(relative))
        read = chosen.notebooks.pop(relative, None)
        chosen.left_out[read.name if read is not None else display(relative)] = why


def _digest_entry(relative: str, data: bytes) -> bytes:
    return relative.encode() + b"\0" + data + b"\0"


def digest(files: dict[str, bytes]) -> str:
    """The sha256 of staged files, in hashing order: what a report's content_hash holds."""
    hashed = hashlib.sha256()
    for relative, data in files.items():
        hashed.update(_digest_entry(relative, data))
    return hashed.hexdigest()


def content_hash(source: Path) -> str:
    """The sha256 of what staging would copy: the same value a report's content_hash holds."""
    return digest(select(source).files)


def defined_in(source: bytes) -> list[str]:
    """The classes and functions a module defines at its top, in order."""
    seen = bound_names(source)
    return seen[1] if seen is not None else []


def from_notebooks(chosen: Selection, entries: Mapping[str, Wanted]) -> None:
    """The entry files not handed in that a notebook's module defines the names of (`serve`),
    each a module of one line that imports them from it; each notebook's module as graded,
    without the demo code its graded names do not need; and notes saying so."""
    chosen.made += [
        f"{entry}: graded as handed in; the notebook {chosen.notebooks[module].name} defines "
        f"{', '.join(want.names)} too"
        for entry, want in entries.items()
        if entry in chosen.files
        for module in chosen.notebooks
        if module not in entries and defines(chosen.files[module], want.names)
    ]
    served = serve(chosen.files, chosen.notebooks, entries, MAX_TOTAL_BYTES - chosen.total)
    for module, made in served.modules.items():
        chosen.files[module] = made
    chosen.made += served.notes
    for entry, made in served.entries.items():
        if any(relative.startswith(f"{entry}/") for relative in chosen.files):
            chosen.made.append(f"{entry}: not made of a notebook: a folder has its name")
        else:
            chosen.files[entry] = made


def files_found(source: Path, entries: Mapping[str, Wanted]) -> tuple[set[str], list[str]]:
    """The Python files staging would copy of `source`, those made of its notebooks included,
    and its other files' names (as feedback shows them)."""
    chosen = select(source)
    from_notebooks(chosen, entries)
    return set(chosen.files), chosen.others


NAME_ERRORS = {
    errno.EEXIST,
    errno.EISDIR,
    errno.ENOTDIR,
    errno.ENAMETOOLONG,
    errno.EILSEQ,
    errno.EINVAL,
}
"""What the host's file system says of a name the candidate chose (two names it holds as one, a
file where a folder is, a name it refuses): a finding of that submission's, never a grader
error."""


def write_staged(dest: Path, relative: str, data: bytes) -> None:
    """Write one planned file under `dest`, and the folders above it, never over anything: a
    file and a folder of one name, or two names the file system holds as one, fail here."""
    *folders, name = relative.split("/")
    target = dest
    for folder in folders:
        target = target / folder
        target.mkdir(exist_ok=True)
        target.chmod(READABLE_DIR)
    with (target / name).open("xb") as file:
        file.write(data)
    (target / name).chmod(READABLE_FILE)


def stage_submission(
    source: Path, dest: Path, entries: Mapping[str, Wanted] | None = None
) -> Staged:
    """Copy the submission's regular Python files, within the limits, to `dest`, readable by
    every account whatever the umask; its notebooks become modules, and the problems' entry
    files (`entries`: each with what it must define) are found in them."""
    chosen = select(source)
    content = digest(chosen.files)  # what was handed in: the entry files made follow from it
    defined = {m: defined_in(chosen.files[m]) for m in chosen.notebooks}
    from_notebooks(chosen, entries or {})
    dest.mkdir(parents=True, exist_ok=True)
    dest.chmod(READABLE_DIR)
    for relative, data in list(chosen.files.items()):
        try:
            write_staged(dest, relative, data)
        except OSError as exc:
            if exc.errno not in NAME_ERRORS:
                raise  # the host's own (its disk full, its folder gone): a grader error
            del chosen.files[relative]
            chosen.left_out[display(relative)] = f"could not be staged ({exc.strerror})"
    return Staged(
        dest,
        content,
        chosen.notes(),
        chosen.files,
        chosen.left_out,
        chosen.unread,
        chosen.others,
        defined,
    )
