"""A class to compare: independent correct solutions (the shipped complete submission, the
accepted solutions of every problem, two students of their own style under
tests/similarity/honest/) and disguised copies of some of them, one per disguise."""

from __future__ import annotations

from pathlib import Path

from tests.similarity_disguises import DISGUISES, Files, everything

ROOT = Path(__file__).resolve().parent.parent
HONEST_DIR = ROOT / "tests" / "similarity" / "honest"
ACCEPTED = ("einsum", "unflatten", "view_transpose")
COPIED = {  # disguise: the student copied
    "renamed": "loops",
    "reordered": "complete",
    "recommented": "compact",
    "swapped": "compact",
    "moved": "loops",
    "extracted": "view_transpose",
    "everything": "complete",
}


def python_files(folder: Path) -> Files:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py"))}


def entry(problem: Path) -> str:
    for line in (problem / "spec.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("entry"):
            return line.split("=", 1)[1].strip().strip('"')
    raise ValueError(f"{problem} names no entry file")


def honest_class() -> dict[str, Files]:
    """Six students' independent solutions of every problem."""
    problems = sorted(p.parent for p in (ROOT / "problems").glob("*/spec.toml"))
    students = {"complete": python_files(ROOT / "submissions" / "complete")}
    for style in ACCEPTED:
        students[style] = {entry(p): (p / "accepted" / f"{style}.py").read_text() for p in problems}
    for folder in sorted(HONEST_DIR.iterdir()):
        students[folder.name] = python_files(folder)
    return students


def copied_class() -> tuple[dict[str, Files], dict[str, str]]:
    """The honest class and a disguised copy per disguise; each copy's original."""
    students = honest_class()
    originals = {}
    for disguise, original in COPIED.items():
        name = f"{disguise}_copy_of_{original}"
        change = DISGUISES.get(disguise, everything)
        students[name], originals[name] = change(students[original]), original
    return students, originals


def write_class(students: dict[str, Files], folder: Path) -> Path:
    for name, files in students.items():
        for file, source in files.items():
            (folder / name / file).parent.mkdir(parents=True, exist_ok=True)
            (folder / name / file).write_text(source, encoding="utf-8")
    return folder
