"""Reading a candidate kit (`grader release`): its problems with their visible checks only, and
a record of the reference that judges them without any reference source.

    KIT/course.toml                the course's name and due date
    KIT/kit.json                   the grader version, the seed, each problem's withheld
                                   checks (count and points), the reference's recorded answers
    KIT/reference.safetensors      the visible probes' inputs, the reference's outputs on them
    KIT/problems/<id>/problem.json the problem's contract and its visible checks
    KIT/problems/<id>/statement.md, starter.py, and checks.py when a visible check is its own
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import torch
from pydantic import ValidationError
from safetensors.torch import load_file

from grader.courses.catalog import Catalog, Problem, validate
from grader.courses.coursefile import CourseError
from grader.courses.spec import ProblemSpec
from grader.courses.trusted import import_file
from grader.sandbox.worker import ProbeData
from grader.strict import Strict
from grader.verdict.checks.base import Check, own_checks
from grader.verdict.reference import Outcome, Recorded, ReferenceSource

KIT_FILE = "kit.json"
TENSORS_FILE = "reference.safetensors"
PROBLEM_FILE = "problem.json"


class RecordedOutcome(Strict):
    question: str
    data: dict[str, Any]
    tensors: list[str]  # names of the outcome's tensors; stored as `out/<index>/<name>`


class KitProblem(Strict):
    id: str
    withheld_checks: int
    withheld_points: float


class KitIndex(Strict):
    """`kit.json`."""

    grader_version: str
    seed: int
    problems: list[KitProblem]
    answers: dict[str, Any]
    outcomes: list[RecordedOutcome]


class KitCatalog(Catalog):
    """A kit's problems: visible checks only, judged against the kit's record."""

    def __init__(self, folder: Path, index: KitIndex, tensors: dict[str, torch.Tensor]) -> None:
        self.folder = folder
        self.seed = index.seed
        self.problems = {}
        self.add([kit_problem(folder / "problems" / p.id, p) for p in index.problems])
        inputs: dict[str, dict[str, torch.Tensor]] = {}
        for name, tensor in tensors.items():
            if name.startswith("in/"):
                problem, _, key = name.removeprefix("in/").partition("/")
                inputs.setdefault(problem, {})[key] = tensor
        outcomes: dict[str, Outcome] = {
            o.question: (cast(ProbeData, o.data), {n: tensors[f"out/{i}/{n}"] for n in o.tensors})
            for i, o in enumerate(index.outcomes)
        }
        self.source = Recorded(index.answers, outcomes, inputs, f"the kit {folder}")

    def reference_source(self) -> ReferenceSource:
        return self.source

    def reference_file(self, problem_id: str) -> Path:
        raise CourseError(f"{self.folder} is a candidate kit: it holds no reference solution")


def kit_problem(folder: Path, entry: KitProblem) -> Problem:
    own: dict[str, type[Check]] = {}
    if (folder / "checks.py").is_file():
        with own_checks() as own:
            import_file(folder / "checks.py", f"kit_checks_{entry.id}")
    path = folder / PROBLEM_FILE
    try:
        spec = ProblemSpec.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError) as exc:
        raise CourseError(f"{path}: {exc}") from exc
    problem = Problem(
        spec,
        folder,
        folder / "reference.py",  # absent: a kit judges from its record
        own,
        (entry.withheld_checks, entry.withheld_points),
    )
    validate(problem, path)
    return problem


def open_kit(folder: Path) -> KitCatalog:
    """The kit in `folder`, or a CourseError naming what is wrong with it."""
    path = folder / KIT_FILE
    try:
        index = KitIndex.model_validate(json.loads(path.read_text(encoding="utf-8")))
        tensors = load_file(folder / TENSORS_FILE)
    except (OSError, ValueError, ValidationError) as exc:
        raise CourseError(f"{path}: not a candidate kit this grader reads: {exc}") from exc
    return KitCatalog(folder, index, tensors)
