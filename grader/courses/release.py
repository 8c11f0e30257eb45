"""`grader release`: the candidate kit, the half of a course candidates may hold.

The kit holds the course's name and due date, each problem's statement, starter and contract
with its visible checks, and a record of the reference on those checks alone: their inputs,
drawn once from a seed the kit keeps, and the reference's results on them. No reference
source, no hidden or `after_due_date` check, no input of theirs: grading for credit draws its
inputs from a fresh seed, with the full course. Known mistakes are named from the kit's
inputs, replayed by the grader's own forms (`grader/verdict/diagnose.py`).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import torch
from safetensors.torch import save_file

from grader import __version__
from grader.courses.catalog import Problem
from grader.courses.course import OpenCourse
from grader.courses.kit import (
    KIT_FILE,
    PROBLEM_FILE,
    TENSORS_FILE,
    KitIndex,
    KitProblem,
    RecordedOutcome,
)
from grader.courses.readme import README_FILE, kit_readme
from grader.specs.course import Course, CourseError
from grader.specs.paths import COURSE_FILE
from grader.specs.problem import Visibility
from grader.verdict.plan import draw_seed
from grader.verdict.prepare import prepare
from grader.verdict.reference import Recorder

SHOWN = {Visibility.visible}


def course_text(course: Course) -> str:
    """The kit's `course.toml`: the name and the due date, no problem list."""
    lines = [f"name = {json.dumps(course.name)}"]
    if course.due is not None:
        lines.append(f"due = {course.due.isoformat()}")
    return "\n".join(lines) + "\n"


def release(course: OpenCourse, out: Path, seed: int | None = None) -> Path:
    """Write the candidate kit of `course` into `out` (a new or empty folder)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CourseError(f"{out}: exists and is not an empty folder: give a new one")
    catalog = course.catalog
    if catalog.is_kit:
        raise CourseError(f"{course.folder} is a candidate kit already: release the full course")
    seed = draw_seed(seed)
    shown = [p.restricted(SHOWN) for p in catalog.problems.values()]
    recorder = Recorder(catalog.reference_source())
    prepared = prepare(shown, seed, recorder)
    tensors: dict[str, torch.Tensor] = {}
    for problem_id, item in prepared.items():
        tensors.update({f"in/{problem_id}/{k}": v for k, v in item.plan.tensors.items()})
    outcomes = []
    for index, (question, (data, results)) in enumerate(recorder.outcomes.items()):
        tensors.update({f"out/{index}/{name}": t for name, t in results.items()})
        outcomes.append(RecordedOutcome(question=question, data=data, tensors=sorted(results)))
    problems = []
    for full, visible in zip(catalog.problems.values(), shown, strict=True):
        hidden = [c for c in full.spec.checks if c.visibility not in SHOWN]
        problems.append(
            KitProblem(
                id=full.spec.id,
                withheld_checks=len(hidden),
                withheld_points=sum(c.points for c in hidden),
            )
        )
        used = prepared[full.spec.id].plan.used
        configs = [c for c in visible.spec.configs if c.id in used]
        diagnosis = visible.spec.diagnosis
        if diagnosis is not None and diagnosis.form in visible.own_forms:
            diagnosis = None  # the course's form computes the reference: it stays with the course
        shipped = visible.spec.model_copy(update={"configs": configs, "diagnosis": diagnosis})
        write_problem(replace(visible, spec=shipped), out)
    kit = KitIndex(
        grader_version=__version__,
        seed=seed,
        problems=problems,
        answers=recorder.answers,
        outcomes=outcomes,
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / COURSE_FILE).write_text(course_text(course.course), encoding="utf-8")
    (out / KIT_FILE).write_text(kit.model_dump_json(indent=1) + "\n", encoding="utf-8")
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(out / TENSORS_FILE))
    readme = kit_readme(course.course, list(catalog.problems.values()), out.resolve().name)
    (out / README_FILE).write_text(readme, encoding="utf-8")
    readable(out)
    return out


def readable(folder: Path) -> None:
    """Every file of the kit readable by every account (0644), every folder open (0755), as a
    shared kit must be: safetensors writes its file 0600, and copies keep the umask's mode."""
    folder.chmod(0o755)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)


def write_problem(visible: Problem, out: Path) -> None:
    """A problem's part of the kit: its contract and visible checks, statement and starter, and
    its own checks.py when a visible check is one of them."""
    folder = out / "problems" / visible.spec.id
    folder.mkdir(parents=True)
    spec = visible.spec.model_dump_json(indent=2)
    (folder / PROBLEM_FILE).write_text(spec + "\n", encoding="utf-8")
    for name in ("statement.md", "starter.py"):
        shutil.copyfile(visible.folder / name, folder / name)
    if any(c.check in visible.own_checks for c in visible.spec.checks):
        shutil.copyfile(visible.folder / "checks.py", folder / "checks.py")
