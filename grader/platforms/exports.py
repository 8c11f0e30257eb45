"""Class exports as grading input: zip files, Gradescope's export, cloned Classroom repositories.

Every submission keeps its folder's name as the report's name, so resuming finds its report.
"""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import yaml

from grader.errors import GraderError
from grader.platforms.unzip import CLASS, STUDENT, UnsafeZip, extract
from grader.reports.models import Student

if TYPE_CHECKING:
    from grader.courses.catalog import Catalog

METADATA = "submission_metadata.yml"


class ExportError(GraderError):
    """PATH is no input the grader reads, or the export's metadata is unreadable."""


@dataclass(frozen=True)
class Submission:
    path: Path
    student: Student | None = None


@dataclass
class Export:
    layout: str
    submissions: list[Submission] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # archives left out, with the reason


@contextmanager
def open_export(path: Path, catalog: Catalog) -> Iterator[Export]:
    """The submissions in `path`; what was unpacked for them is removed on exit."""
    with tempfile.TemporaryDirectory(prefix="grader-export-") as scratch:
        yield read_export(path, Path(scratch), catalog)


def find_submissions(path: Path, catalog: Catalog) -> list[Path]:
    """A single submission (it holds an entry file) or a folder of them, one per sub-folder."""
    entries = {p.spec.entry for p in catalog.problems.values()}
    if any((path / entry).is_file() for entry in entries):
        return [path]
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))


def read_export(path: Path, scratch: Path, catalog: Catalog) -> Export:
    if path.is_file():
        return read_archive(path, scratch, catalog)
    if (path / METADATA).is_file():
        return Export("a Gradescope export", gradescope(path))
    folders = find_submissions(path, catalog)
    if folders == [path]:
        return Export("a submission folder", [Submission(path)])
    archives = sorted(p for p in path.glob("*.zip") if p.is_file() and not p.name.startswith("."))
    if folders and not archives and all((f / ".git").exists() for f in folders):
        return Export("cloned Classroom repositories", classroom(folders))
    export = Export("a folder of submissions", [Submission(f) for f in folders])
    taken = {f.name for f in folders}
    for archive in archives:
        if archive.stem in taken:
            export.skipped.append(f"{archive.name}: a folder {archive.stem} is graded already")
            continue
        try:
            export.submissions.append(student_zip(archive, scratch))
        except UnsafeZip as exc:
            export.skipped.append(f"{archive.name}: {exc}")
    export.submissions.sort(key=lambda s: s.path.name)
    return export


def read_archive(archive: Path, scratch: Path, catalog: Catalog) -> Export:
    """A zip file given as PATH: Gradescope's whole export, a zipped folder of submissions
    (two or more sub-folders holding problem files), or one student's submission."""
    if archive.suffix != ".zip":
        raise ExportError(f"{archive} is neither a folder nor a zip file")
    unpacked = scratch / "export"
    try:
        extract(archive, unpacked, class_file, CLASS)
    except UnsafeZip as exc:
        raise ExportError(f"{archive.name}: {exc}") from exc
    root = sole_folder(unpacked)
    if (root / METADATA).is_file():
        return Export("a Gradescope export", gradescope(root))
    if not any(root.rglob("*.py")):
        with zipfile.ZipFile(archive) as zf:
            zips = [n for n in zf.namelist() if n.lower().endswith(".zip")]
        if zips:
            raise ExportError(
                f"{archive.name} holds {len(zips)} zip file(s) and no Python file: unzip it "
                "and grade the folder (a folder of per-student zip files is read as is)"
            )
    folders = find_submissions(root, catalog)
    if len([f for f in folders if find_submissions(f, catalog) == [f]]) > 1:
        return Export("a zipped folder of submissions", [Submission(f) for f in folders])
    export = Export("a zip file")
    try:
        export.submissions.append(student_zip(archive, scratch))
    except UnsafeZip as exc:
        export.skipped.append(f"{archive.name}: {exc}")
    return export


def python_file(path: PurePosixPath) -> bool:
    return path.suffix == ".py" and "__MACOSX" not in path.parts


def class_file(path: PurePosixPath) -> bool:
    return python_file(path) or path.name == METADATA


def sole_folder(folder: Path) -> Path:
    """The folder's only entry when that is a folder (a zipped folder), else the folder."""
    entries = list(folder.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else folder


def student_zip(archive: Path, scratch: Path) -> Submission:
    """One student's zip, unpacked to a folder named as its stem, the student's id."""
    unpacked = scratch / "zips" / archive.stem
    extract(archive, unpacked, python_file, STUDENT)
    dest = scratch / "students" / archive.stem
    dest.parent.mkdir(exist_ok=True)
    sole_folder(unpacked).rename(dest)
    return Submission(dest, Student(id=archive.stem))


def classroom(folders: list[Path]) -> list[Submission]:
    """`<assignment>-<username>` clones: the id is the name less the prefix they all share."""
    parts = [f.name.split("-") for f in folders]
    shared = 0
    while all(len(p) > shared + 1 and p[shared] == parts[0][shared] for p in parts):
        shared += 1
    ids = ["-".join(p[shared:]) for p in parts]
    return [Submission(f, Student(id=i)) for f, i in zip(folders, ids, strict=True)]


def gradescope(root: Path) -> list[Submission]:
    """The `submission_<id>` folders of a Gradescope export, with their submitters."""
    metadata = read_metadata(root / METADATA)
    return [
        Submission(folder, submitters(metadata.get(folder.name)))
        for folder in sorted(root.glob("submission_*"))
        if folder.is_dir()
    ]


class MetadataLoader(yaml.SafeLoader):
    """`yaml.safe_load`, but nodes Ruby tagged (`!ruby/object:...`) are read as plain data."""


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
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=MetadataLoader)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ExportError(f"{path.name} is not readable YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ExportError(f"{path.name} does not map submissions to their metadata")
    return dict(plain_keys(data))


def submitters(entry: Any) -> Student | None:
    """The submission's students, a group's joined with `; `: id from `sid`, else `email`."""
    people = entry.get("submitters") if isinstance(entry, dict) else None
    if not isinstance(people, list):
        return None
    people = [p for p in people if isinstance(p, dict)]
    ids = [str(p.get("sid") or p.get("email") or "") for p in people]
    names = [str(p.get("name") or "") for p in people]
    if not any(ids) and not any(names):
        return None
    return Student(id="; ".join(ids), name="; ".join(names))
