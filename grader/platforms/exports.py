"""Class exports as grading input: zip files, Gradescope's export, cloned Classroom repositories.

Every submission keeps its folder's name as the report's name, so resuming finds its report.
Only the top of the path the instructor hands in may be a Gradescope export, and never when it
holds problem files: a student's folder or zip, and whatever is unpacked from one, is a
submission. Its metadata is read as plain data within caps (no anchors or aliases); a file
that is not such data stops the export, but one submission's odd entry is a note on it alone:
it names no one in plain values (the folder's name is the identity), or a field is cut.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import yaml

from grader.errors import GraderError
from grader.names import as_text, canonical, reading, submission_name
from grader.platforms.unzip import CLASS, STUDENT, UnsafeZip, extract
from grader.reports.models import Student
from grader.sandboxing.capped import read_capped
from grader.sandboxing.locate import holds_problems, locate
from grader.sandboxing.notebooks import NOTEBOOK

if TYPE_CHECKING:
    from grader.courses.catalog import Catalog

METADATA = "submission_metadata.yml"
MAX_METADATA_BYTES = 10 << 20
MAX_METADATA_DEPTH = 16  # Gradescope's own nests 4 levels deep
MAX_FIELD_CHARS = 256  # a submitter's id, e-mail or name
CUT = "…"


class ExportError(GraderError):
    """PATH is no input the grader reads, or the export's metadata is unreadable."""


class EntryError(ValueError):
    """Why one submission's metadata names none of its submitters."""


@dataclass(frozen=True)
class Submission:
    path: Path
    student: Student | None = None


@dataclass
class Export:
    layout: str
    submissions: list[Submission] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # archives left out, with the reason
    notes: list[str] = field(default_factory=list)  # metadata read otherwise than given


@contextmanager
def open_export(path: Path, catalog: Catalog) -> Iterator[Export]:
    """The submissions in `path`; what was unpacked for them is removed on exit."""
    with tempfile.TemporaryDirectory(prefix="grader-export-") as scratch:
        yield distinct(read_export(path, Path(scratch), catalog))


def distinct(export: Export) -> Export:
    """The export without the submissions whose names read alike (`reading`: a name that is
    not text, `as_text` escaping its bytes, may read as one that is; `Zoë` in two Unicode
    forms reads as one; `Alice` and `alice` share a report file where case is ignored), so
    that no two rows, tables or report files show one name. Of such names, the one that is its
    own text in NFC (`canonical`) keeps it; the others are left out, with why (all of them,
    where none or several are canonical)."""
    named: dict[str, list[Submission]] = {}
    for submission in export.submissions:
        named.setdefault(reading(submission_name(submission.path)), []).append(submission)
    for alike in named.values():
        if len(alike) == 1:
            continue
        text = [s for s in alike if canonical(s.path.name)]
        kept = text if len(text) == 1 else []
        for submission in alike:
            if submission not in kept:
                export.submissions.remove(submission)
                name = submission_name(submission.path)
                shown = name if canonical(name) else ascii(name)[1:-1]  # `Zoe\u0308`
                export.skipped.append(f"{shown}: a name another submission's reads as: rename it")
    return export


def find_submissions(path: Path, catalog: Catalog) -> list[Path]:
    """A single submission (it holds an entry file at its top) or a folder of them, one per
    sub-folder."""
    if holds_problems(path, catalog.entries):
        return [path]
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))


def read_export(path: Path, scratch: Path, catalog: Catalog) -> Export:
    if path.is_file():
        return read_archive(path, scratch, catalog)
    folders = find_submissions(path, catalog)
    if folders == [path]:
        return Export("a submission folder", [Submission(path)])
    if (path / METADATA).is_file():
        return gradescope(path)
    archives = sorted(p for p in path.glob("*.zip") if p.is_file() and not p.name.startswith("."))
    if folders and not archives and all((f / ".git").exists() for f in folders):
        return Export("cloned Classroom repositories", classroom(folders))
    export = Export("a folder of submissions", [Submission(f) for f in folders])
    taken = {f.name for f in folders}
    for archive in archives:
        if archive.stem in taken:
            export.skipped.append(f"{archive.name}: a folder {archive.stem} is graded already")
            continue
        add_student_zip(export, archive, scratch)
    export.submissions.sort(key=lambda s: s.path.name)
    return export


def read_archive(archive: Path, scratch: Path, catalog: Catalog) -> Export:
    """A zip file given as PATH: Gradescope's whole export, a zipped folder of submissions
    (two or more sub-folders holding problem files, at their top or in one folder of each), or
    one student's submission."""
    if archive.suffix != ".zip":
        raise ExportError(f"{archive} is neither a folder nor a zip file")
    unpacked = scratch / "export"
    try:
        extracted = extract(archive, unpacked, class_file, CLASS, owned=STUDENT)
    except UnsafeZip as exc:
        raise ExportError(f"{archive.name}: {exc}") from exc
    notes = extracted.notes
    root = sole_folder(unpacked)
    if (root / METADATA).is_file() and not holds_problems(root, catalog.entries):
        export = gradescope(root)
        export.skipped += [f"{archive.name}: {note}" for note in notes]
        return export
    if not any(root.rglob("*.py")):
        with zipfile.ZipFile(archive) as zf:
            zips = [n for n in zf.namelist() if n.lower().endswith(".zip")]
        if zips:
            raise ExportError(
                f"{archive.name} holds {len(zips)} zip file(s) and no Python file: unzip it "
                "and grade the folder (a folder of per-student zip files is read as is)"
            )
    folders = find_submissions(root, catalog)
    students = [f for f in folders if is_submission(f, catalog)]
    if len(students) > 1 or (students and extracted.refused):  # others' folders left out
        export = Export("a zipped folder of submissions", [Submission(f) for f in folders])
        export.skipped += [f"{archive.name}: {note}" for note in notes]
        return export
    export = Export("a zip file")
    add_student_zip(export, archive, scratch)
    return export


def is_submission(folder: Path, catalog: Catalog) -> bool:
    """Whether `folder` holds problem files where grading finds them (`locate`)."""
    return holds_problems(locate(folder, catalog.entries).folder, catalog.entries)


def python_file(path: PurePosixPath) -> bool:
    """A Python file or a notebook (whose code cells staging takes as a module)."""
    return path.suffix in (".py", NOTEBOOK) and "__MACOSX" not in path.parts


def class_file(path: PurePosixPath) -> bool:
    """A Python file, or the metadata at the top of the zip or of its one folder."""
    return python_file(path) or (path.name == METADATA and len(path.parts) <= 2)


def sole_folder(folder: Path) -> Path:
    """The folder's only entry when that is a folder (a zipped folder), else the folder."""
    entries = list(folder.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else folder


def add_student_zip(export: Export, archive: Path, scratch: Path) -> None:
    """One student's zip, unpacked as a submission (never an export), or skipped with why."""
    try:
        submission, notes = student_zip(archive, scratch)
    except UnsafeZip as exc:
        export.skipped.append(f"{archive.name}: {exc}")
        return
    export.submissions.append(submission)
    export.skipped += [f"{archive.name}: {note}" for note in notes]


def student_zip(archive: Path, scratch: Path) -> tuple[Submission, list[str]]:
    """One student's zip, unpacked to a folder named as its stem, the student's id; and what
    was left out of it."""
    unpacked = scratch / "zips" / archive.stem
    notes = extract(archive, unpacked, python_file, STUDENT).notes
    dest = scratch / "students" / archive.stem
    dest.parent.mkdir(exist_ok=True)
    sole_folder(unpacked).rename(dest)
    return Submission(dest, Student(id=as_text(archive.stem))), notes


def classroom(folders: list[Path]) -> list[Submission]:
    """`<assignment>-<username>` clones: the id is the name less the prefix they all share."""
    parts = [f.name.split("-") for f in folders]
    shared = 0
    while all(len(p) > shared + 1 and p[shared] == parts[0][shared] for p in parts):
        shared += 1
    ids = [as_text("-".join(p[shared:])) for p in parts]
    return [Submission(f, Student(id=i)) for f, i in zip(folders, ids, strict=True)]


def gradescope(root: Path) -> Export:
    """The `submission_<id>` folders of a Gradescope export, with their submitters."""
    metadata = read_metadata(root / METADATA)
    export = Export("a Gradescope export")
    for folder in sorted(root.glob("submission_*")):
        if not folder.is_dir():
            continue
        student, note = submitters(folder.name, metadata.get(folder.name))
        export.submissions.append(Submission(folder, student))
        if note:
            export.notes.append(f"{METADATA}: {folder.name!r}: {note}")
    return export


class MetadataLoader(yaml.SafeLoader):
    """`yaml.safe_load`, but refusing anchors and aliases (a few hundred bytes of them stand
    for gigabytes) and nesting over `MAX_METADATA_DEPTH` levels; nodes Ruby tagged
    (`!ruby/object:...`) are read as plain data."""

    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise refused("anchors and aliases are not allowed", event)
        if self.depth == MAX_METADATA_DEPTH:
            raise refused(f"nested over {MAX_METADATA_DEPTH} levels", event)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def refused(problem: str, event: Any) -> yaml.YAMLError:
    """The error the loader raises where `event` begins."""
    return yaml.composer.ComposerError(None, None, problem, event.start_mark)


def untagged(loader: yaml.SafeLoader, suffix: str, node: Any) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


MetadataLoader.add_multi_constructor("!", untagged)


def plain_keys(data: Any) -> Any:
    """Ruby-symbol keys (`:name`) as plain ones (`name`), all the way down."""
    if isinstance(data, dict):
        return {str(k).lstrip(":"): plain_keys(v) for k, v in data.items()}
    if isinstance(data, list):
        return [plain_keys(v) for v in data]
    return data


def read_metadata(path: Path) -> dict[str, Any]:
    """The export's metadata by submission; an `ExportError`, in one line, for anything but
    plain YAML within the caps that maps submissions to their metadata."""
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size  # checked first: reading allocates the cap
        data, more = read_capped(handle, min(size, MAX_METADATA_BYTES))
    if more or size > MAX_METADATA_BYTES:
        raise ExportError(f"{path.name} is over {MAX_METADATA_BYTES >> 20} MB")
    try:
        loaded = yaml.load(data.decode("utf-8"), Loader=MetadataLoader)
    except yaml.YAMLError as exc:
        raise ExportError(f"{path.name} is not readable YAML: {yaml_problem(exc)}") from exc
    except ValueError as exc:  # not UTF-8, an impossible date, an int of 5000 digits
        raise ExportError(f"{path.name} is not readable YAML: {one_line(str(exc))}") from exc
    if not isinstance(loaded, dict):
        raise ExportError(f"{path.name} does not map submissions to their metadata")
    return dict(plain_keys(loaded))


def yaml_problem(exc: yaml.YAMLError) -> str:
    """What the YAML error says, and its line, without the document's text."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if not problem:
        return one_line(str(exc))
    return one_line(str(problem)) + (f" (line {mark.line + 1})" if mark is not None else "")


def one_line(text: str) -> str:
    return (text.splitlines() or [""])[0][:200]


def submitters(folder: str, entry: Any) -> tuple[Student | None, str | None]:
    """The submission's students, a group's joined with `; `: id from `sid`, else `email`; and
    a note when its entry is not read as given. One student's entry never stops the export: one
    that names no one in plain values leaves the submission to its folder's name, and a field
    over `MAX_FIELD_CHARS` is cut."""
    try:
        people = [
            (field_text(p.get("sid") or p.get("email")), field_text(p.get("name")))
            for p in people_of(entry)
        ]
    except EntryError as exc:
        return None, f"{exc}: graded under its folder's name"
    if not any(sid or name for sid, name in people):
        return None, None
    ids, names = [cut(sid) for sid, _ in people], [cut(name) for _, name in people]
    long = any(len(text) > MAX_FIELD_CHARS for pair in people for text in pair)
    note = f"a submitter's field over {MAX_FIELD_CHARS} characters, cut" if long else None
    return Student(id="; ".join(ids), name="; ".join(names)), note


def people_of(entry: Any) -> list[dict[str, Any]]:
    """The submitters an entry lists; an `EntryError` unless it lists them as mappings."""
    if entry is None:
        return []
    if not isinstance(entry, dict):
        raise EntryError("not mapped to its metadata")
    people = entry.get("submitters")
    if people is None:
        return []
    if not isinstance(people, list) or not all(isinstance(p, dict) for p in people):
        raise EntryError("its submitters are not a list of people")
    return people


def field_text(value: Any) -> str:
    """A submitter's id, e-mail or name as text; an `EntryError` unless it is a scalar."""
    if isinstance(value, dict | list):
        raise EntryError("a submitter's field is not a value")
    return as_text("" if value is None else str(value))


def cut(text: str) -> str:
    """`text` within `MAX_FIELD_CHARS`, ending in `…` where cut."""
    return text if len(text) <= MAX_FIELD_CHARS else text[: MAX_FIELD_CHARS - len(CUT)] + CUT
