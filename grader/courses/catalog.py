"""The problem catalog: problem folders, each with its spec, reference and checks."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.errors import GraderError
from grader.specs.course import CourseError
from grader.specs.paths import builtin_problems, reference_path
from grader.specs.problem import ProblemSpec, SpecError, Visibility, load_spec
from grader.specs.trusted import import_file

if TYPE_CHECKING:  # the checks import torch: only grading and validating load them
    from grader.verdict.checks import Check
    from grader.verdict.diagnose import Diagnoses, Form
    from grader.verdict.reference import ReferenceSource


@dataclass
class Problem:
    spec: ProblemSpec
    folder: Path
    reference_file: Path
    own_checks: dict[str, type[Check]] = field(default_factory=dict)  # from its checks.py
    own_forms: dict[str, Form] = field(default_factory=dict)  # diagnosis forms of its checks.py
    own_mistakes: dict[str, str] = field(default_factory=dict)  # and the mistakes they name
    withheld: tuple[int, float] = (0, 0.0)  # checks a candidate kit does not hold, their points

    @property
    def points(self) -> float:
        """Its points, those of the checks a candidate kit does not hold included."""
        return self.spec.max_score + self.withheld[1]

    def hidden(self) -> tuple[int, float]:
        """How many checks a candidate does not see before the due date, and their points,
        those a candidate kit does not hold included."""
        unseen = [c for c in self.spec.checks if c.visibility is not Visibility.visible]
        count, points = self.withheld
        return len(unseen) + count, sum(c.points for c in unseen) + points

    def reference(self) -> dict[str, Any]:
        return vars(import_file(self.reference_file, f"reference_{self.spec.id}"))

    @property
    def diagnoses(self) -> Diagnoses:
        """The forms and mistakes its diagnosis may name: the grader's and its own."""
        from grader.verdict.diagnose import BUILTIN

        return BUILTIN.with_own(self.own_forms, self.own_mistakes)

    @property
    def library(self) -> dict[str, type[Check]]:
        """The checks this problem's spec may declare: the library's and its own."""
        from grader.verdict.checks import CHECKS

        return {**CHECKS, **self.own_checks}

    def checks(self) -> list[Check]:
        library, diagnoses = self.library, self.diagnoses
        checks = [library[c.check](c, self.spec) for c in self.spec.checks]
        for check in checks:
            check.diagnoses = diagnoses
        return checks

    def restricted(self, visibilities: Collection[Visibility]) -> Problem:
        """This problem with only its checks of these visibilities (its max score shrinks too)."""
        checks = [c for c in self.spec.checks if c.visibility in visibilities]
        return replace(self, spec=self.spec.model_copy(update={"checks": checks}))

    @property
    def statement(self) -> str:
        return (self.folder / "statement.md").read_text(encoding="utf-8")

    @property
    def starter(self) -> str:
        return (self.folder / "starter.py").read_text(encoding="utf-8")

    @property
    def accepted(self) -> list[Path]:
        """The accepted solutions: other ways to full marks than the reference."""
        return sorted((self.folder / "accepted").glob("*.py"))


def load_problem(folder: Path, checked: bool = True) -> Problem:
    """One problem folder: its spec (`checked` against the library and its own `checks.py`),
    its reference, statement and starter. Unchecked, nothing that runs tensors is imported."""
    spec_path = folder / "spec.toml"
    own = own_code(folder, f"problem_checks_{folder.name}") if checked else OwnCode()
    spec = load_spec(spec_path)
    reference = reference_path(folder)
    if not reference.is_file():
        moved = " (it is in the problem's folder: move it there)"
        hint = moved if (folder / "reference.py").is_file() else ""
        raise SpecError(f"{spec_path}: no reference solution at {reference}{hint}")
    for required in ("statement.md", "starter.py"):
        if not (folder / required).is_file():
            raise SpecError(f"{spec_path}: the problem has no {required}")
    problem = Problem(spec, folder, reference, own.checks, own.forms, own.mistakes)
    if checked:
        validate(problem, spec_path)
    return problem


@dataclass(frozen=True)
class OwnCode:
    """What a problem's `checks.py` defines: checks, diagnosis forms and their mistakes."""

    checks: dict[str, type[Check]] = field(default_factory=dict)
    forms: dict[str, Form] = field(default_factory=dict)
    mistakes: dict[str, str] = field(default_factory=dict)


CHECKS_FILE = "checks.py"
"""A problem's own checks: they run on the host, and go into its candidate kit."""
FORMS_FILE = "diagnosis.py"
"""A problem's own diagnosis forms: never in a kit, since a form computes the reference."""


def own_code(folder: Path, module_name: str) -> OwnCode:
    """The checks a problem's `checks.py` registers and the diagnosis forms its `diagnosis.py`
    does, where it has them; a form in `checks.py` is refused (the kit would carry it)."""
    from grader.verdict.checks.base import own_checks
    from grader.verdict.diagnose import own_forms

    checks: dict[str, type[Check]] = {}
    forms: tuple[dict[str, Form], dict[str, str]] = ({}, {})
    for name, collects_checks in ((CHECKS_FILE, True), (FORMS_FILE, False)):
        path = folder / name
        if not path.is_file():
            continue
        try:
            with own_checks() as found, own_forms() as made:
                import_file(path, f"{module_name}_{path.stem}")
        except ValueError as exc:
            raise SpecError(f"{path}: {exc}") from exc
        if made[0] and collects_checks:
            raise SpecError(
                f"{path}: a diagnosis form goes in {FORMS_FILE}: {CHECKS_FILE} goes into the "
                "candidate kit, and a form computes the reference"
            )
        if found and not collects_checks:
            raise SpecError(f"{path}: checks go in {CHECKS_FILE}")
        checks.update(found)
        forms[0].update(made[0])
        forms[1].update(made[1])
    return OwnCode(checks, *forms)


class TorchMissing(GraderError):
    """PyTorch is not installed, and the command runs tensors."""


def require_torch() -> None:
    """Refuse, saying what to install, where the checks cannot run: PyTorch is missing."""
    if importlib.util.find_spec("torch") is None:
        raise TorchMissing(
            "this command runs tensors and PyTorch is not installed for "
            f"{sys.executable}: install it (`pip install torch`; the CPU build is enough)"
        )


def validate(problem: Problem, path: Path) -> None:
    """Every check and the diagnosis of a problem's spec are known, with params they accept."""
    spec, library, diagnoses = problem.spec, problem.library, problem.diagnoses
    known_configs = {c.id for c in spec.configs}
    for index, check in enumerate(spec.checks):
        for place, config_id in named_configs(check.params, "params"):
            if config_id not in known_configs:
                raise SpecError(
                    f"{path}: checks.{index}.{place}: no config {config_id!r} "
                    f"(the spec's configs: {', '.join(sorted(known_configs)) or 'none'})"
                )
        if check.check not in library:
            known = ", ".join(sorted(library))
            raise SpecError(
                f"{path}: check {check.name!r}: unknown check {check.check!r} (known: {known})"
            )
        try:
            library[check.check](check, spec)
        except ValueError as exc:
            raise SpecError(f"{path}: check {check.name!r}: bad params: {exc}") from exc
    if spec.diagnosis is not None:
        if spec.diagnosis.form not in diagnoses.forms:
            known = ", ".join(sorted(diagnoses.forms))
            raise SpecError(
                f"{path}: diagnosis.form: unknown form {spec.diagnosis.form!r} (known: {known})"
            )
        unknown = [m for m in spec.diagnosis.mistakes if m not in diagnoses.mistakes]
        if unknown:
            raise SpecError(f"{path}: diagnosis.mistakes: unknown {', '.join(unknown)}")


def named_configs(value: object, where: str) -> list[tuple[str, object]]:
    """Every config a check's params name (`config = "..."`, `configs = [...]`, at any depth),
    with the field that names it."""
    found: list[tuple[str, object]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "config":
                found.append((f"{where}.{key}", item))
            elif key == "configs" and isinstance(item, list):
                found += [(f"{where}.{key}", config_id) for config_id in item]
            else:
                found += named_configs(item, f"{where}.{key}")
    return found


class Catalog:
    """A course's problems, in order: by default every folder of the built-in course."""

    seed: int | None = None  # the one seed a candidate kit's records hold

    @property
    def is_kit(self) -> bool:
        """A candidate kit: the visible checks only, judged against recorded answers."""
        return self.seed is not None

    @property
    def entries(self) -> set[str]:
        """The problems' entry files, whose folder in a submission is the one graded."""
        return {p.spec.entry for p in self.problems.values()}

    def __init__(self, problems_dir: Path | None = None, checked: bool = True) -> None:
        """The problems in `problems_dir`; by default, the built-in course's."""
        if checked:
            require_torch()
        folder = builtin_problems() if problems_dir is None else problems_dir
        found = [load_problem(p.parent, checked) for p in sorted(folder.glob("*/spec.toml"))]
        self.problems: dict[str, Problem] = {}
        self.add(sorted(found, key=lambda p: (p.spec.number, p.spec.id)))

    @classmethod
    def of(cls, problems: list[Problem]) -> Catalog:
        """A catalog of these problems, in this order."""
        catalog = cls.__new__(cls)
        catalog.problems = {}
        catalog.add(problems)
        return catalog

    def add(self, problems: list[Problem]) -> None:
        entries: dict[str, str] = {}
        numbers: dict[int, str] = {}
        for problem in problems:
            spec = problem.spec
            if spec.entry in entries:
                raise SpecError(
                    f"{problem.folder}: its entry file {spec.entry} is also "
                    f"{entries[spec.entry]}'s: a submission could not hold both"
                )
            if spec.number in numbers:
                raise SpecError(
                    f"{problem.folder / 'spec.toml'}: number: {spec.number} is also "
                    f"{numbers[spec.number]}'s: give each problem its own"
                )
            entries[spec.entry], numbers[spec.number] = spec.id, spec.id
            self.problems[spec.id] = problem

    def reference_file(self, problem_id: str) -> Path:
        """The reference of a problem of this catalog, or of the built-in course (a problem may
        hand candidates the grader's module of another)."""
        if problem_id in self.problems:
            return self.problems[problem_id].reference_file
        try:
            builtin = reference_path(builtin_problems() / problem_id)
        except CourseError:  # the built-in course is not installed
            builtin = None
        if builtin is None or not builtin.is_file():
            raise SpecError(f"no problem {problem_id!r} in the course or the built-in course")
        return builtin

    def reference_source(self) -> ReferenceSource:
        """What plans learn of the reference: here, the reference solutions themselves."""
        from grader.verdict.reference import LiveReference

        return LiveReference(self.reference_file)

    def select(self, ids: list[str] | None) -> list[Problem]:
        """The problems named by id or by number (`9`, as `grader problems` lists them); all of
        them when none is named."""
        if not ids:
            return list(self.problems.values())
        numbers = {str(p.spec.number): i for i, p in self.problems.items()}
        ids = [numbers.get(i, i) for i in ids]
        unknown = [i for i in ids if i not in self.problems]
        if unknown:
            raise SpecError(
                f"unknown problem {', '.join(unknown)} (known: {', '.join(self.problems)}, "
                "or their numbers)"
            )
        return [self.problems[i] for i in ids]
