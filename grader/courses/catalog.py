"""The problem catalog: every folder under `problems/`, each with its spec, reference and checks."""

from __future__ import annotations

import importlib.util
from collections.abc import Collection
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from grader.courses.paths import PROBLEMS_DIR
from grader.courses.spec import ProblemSpec, SpecError, Visibility, load_spec
from grader.verdict.checks import CHECKS, Check
from grader.verdict.diagnose import FORMS, MISTAKES


@dataclass
class Problem:
    spec: ProblemSpec
    folder: Path
    reference_file: Path

    def reference(self) -> dict[str, Any]:
        return vars(import_file(self.reference_file, f"reference_{self.spec.id}"))

    def checks(self) -> list[Check]:
        return [CHECKS[c.check](c, self.spec) for c in self.spec.checks]

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


def import_file(path: Path, name: str) -> ModuleType:
    """Import a trusted file (reference or problem checks) under a private module name."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SpecError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Catalog:
    """Problems found in a folder, in catalog order."""

    def __init__(self, problems_dir: Path = PROBLEMS_DIR):
        self.problems_dir = problems_dir
        self.problems: dict[str, Problem] = {}
        found = []
        for spec_path in sorted(problems_dir.glob("*/spec.toml")):
            folder = spec_path.parent
            own_checks = folder / "checks.py"
            if own_checks.is_file():
                import_file(own_checks, f"problem_checks_{folder.name}")
            spec = load_spec(spec_path)
            self.validate(spec, spec_path)
            reference = folder / "reference.py"
            if not reference.is_file():
                raise SpecError(f"{spec_path}: no reference solution at {reference}")
            for required in ("statement.md", "starter.py"):
                if not (folder / required).is_file():
                    raise SpecError(f"{spec_path}: the problem has no {required}")
            found.append(Problem(spec, folder, reference))
        for problem in sorted(found, key=lambda p: (p.spec.number, p.spec.id)):
            self.problems[problem.spec.id] = problem

    @staticmethod
    def validate(spec: ProblemSpec, path: Path) -> None:
        for check in spec.checks:
            if check.check not in CHECKS:
                known = ", ".join(sorted(CHECKS))
                raise SpecError(
                    f"{path}: check {check.name!r}: unknown check {check.check!r} (known: {known})"
                )
            try:
                CHECKS[check.check](check, spec)
            except ValueError as exc:
                raise SpecError(f"{path}: check {check.name!r}: bad params: {exc}") from exc
        if spec.diagnosis is not None:
            if spec.diagnosis.form not in FORMS:
                raise SpecError(f"{path}: diagnosis.form: unknown form {spec.diagnosis.form!r}")
            unknown = [m for m in spec.diagnosis.mistakes if m not in MISTAKES]
            if unknown:
                raise SpecError(f"{path}: diagnosis.mistakes: unknown {', '.join(unknown)}")

    def select(self, ids: list[str] | None) -> list[Problem]:
        if not ids:
            return list(self.problems.values())
        unknown = [i for i in ids if i not in self.problems]
        if unknown:
            raise SpecError(
                f"unknown problem {', '.join(unknown)} (known: {', '.join(self.problems)})"
            )
        return [self.problems[i] for i in ids]
