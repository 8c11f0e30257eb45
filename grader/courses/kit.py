"""Reading a candidate kit (`grader release`): its problems with their visible checks only, and
a record of the reference that judges them without any reference source.

    KIT/README.md                  for candidates: the problems, how to check and hand in
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
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from grader.courses.catalog import Catalog, OwnCode, Problem, own_code, validate
from grader.specs.course import CourseError
from grader.specs.paths import reference_path
from grader.specs.problem import ProblemSpec
from grader.strict import Strict

if TYPE_CHECKING:  # torch: only a kit opened to judge (checked) loads its record
    import torch

    from grader.verdict.reference import Outcome, ReferenceSource
    from sandbox.protocol import ProbeData

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
        from grader.verdict.reference import Recorded

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
            o.question: (cast("ProbeData", o.data), {n: tensors[f"out/{i}/{n}"] for n in o.tensors})
            for i, o in enumerate(index.outcomes)
        }
        self.source = Recorded(index.answers, outcomes, inputs, f"the kit {folder}")

    def reference_source(self) -> ReferenceSource:
        return self.source

    def reference_file(self, problem_id: str) -> Path:
        raise CourseError(f"{self.folder} is a candidate kit: it holds no reference solution")


def kit_problem(folder: Path, entry: KitProblem, checked: bool = True) -> Problem:
    """One problem of the kit; `checked`, its visible checks bound (which imports torch)."""
    own = own_code(folder, f"kit_checks_{entry.id}") if checked else OwnCode()
    path = folder / PROBLEM_FILE
    try:
        spec = ProblemSpec.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError) as exc:
        raise CourseError(f"{path}: {exc}") from exc
    problem = Problem(
        spec,
        folder,
        reference_path(folder),  # absent: a kit judges from its record
        own.checks,
        own.forms,
        own.mistakes,
        (entry.withheld_checks, entry.withheld_points),
    )
    if checked:
        validate(problem, path)
    return problem


def open_kit(folder: Path, checked: bool = True) -> Catalog:
    """The kit in `folder`, or a CourseError naming what is wrong with it. Unchecked (to list
    problems, or to start a worker before torch is imported), without checks or record."""
    path = folder / KIT_FILE
    try:
        index = KitIndex.model_validate(json.loads(path.read_text(encoding="utf-8")))
        if not checked:
            return unchecked_kit(folder, index)
        from safetensors.torch import load_file

        tensors = load_file(folder / TENSORS_FILE)
    except (OSError, ValueError, ValidationError) as exc:
        raise CourseError(f"{path}: not a candidate kit this grader reads: {exc}") from exc
    return KitCatalog(folder, index, tensors)


def unchecked_kit(folder: Path, index: KitIndex) -> Catalog:
    """The kit's problems, unbound to their checks, with the kit's seed."""
    problems = [kit_problem(folder / "problems" / p.id, p, checked=False) for p in index.problems]
    catalog = Catalog.of(problems)
    catalog.seed = index.seed
    return catalog
