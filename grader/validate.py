"""Validating the catalog: references score full marks, starters do not, and every mutant in
`problems/<id>/mutants/` loses points on the check it declares, with the diagnosis it declares.

A mutant is a one-file wrong submission whose header declares what it must fail:

    # expect-fail: matches the reference (float32)
    # expect-diagnosis: no_scale
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.backends.base import Backend
from grader.catalog import Catalog, Problem
from grader.grade import Grader
from grader.report import CheckStatus, ProblemStatus, SubmissionReport

HEADER = re.compile(r"^#\s*expect-(fail|diagnosis):\s*(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Mutant:
    path: Path
    fails: list[str]
    diagnoses: list[str]


@dataclass
class Outcome:
    problem: str
    kind: str  # reference, starter or mutant
    name: str
    ok: bool
    detail: str


def read_mutant(path: Path) -> Mutant:
    found = HEADER.findall(path.read_text(encoding="utf-8"))
    fails = [v for k, v in found if k == "fail"]
    if not fails:
        raise ValueError(f"{path}: no '# expect-fail: CHECK NAME' header")
    return Mutant(path, fails, [v for k, v in found if k == "diagnosis"])


def mutants_of(problem: Problem) -> list[Mutant]:
    return [read_mutant(p) for p in sorted((problem.folder / "mutants").glob("*.py"))]


def judge_mutant(problem: Problem, mutant: Mutant, report: SubmissionReport) -> Outcome:
    checks = {c.name: c for c in report.problem(problem.spec.id).checks}
    misses = []
    for name in mutant.fails:
        check = checks.get(name)
        if check is None:
            misses.append(f"no check named {name!r}")
        elif check.status is CheckStatus.passed:
            misses.append(f"passed {name!r}")
    got = {c.diagnosis.mistake for c in checks.values() if c.diagnosis and c.diagnosis.mistake}
    misses += [
        f"no diagnosis {d!r} (got {sorted(got) or 'none'})"
        for d in mutant.diagnoses
        if d not in got
    ]
    score = report.problem(problem.spec.id)
    if score.status is ProblemStatus.grader_error:
        misses.append(f"grader error: {score.message[:300]}")
    detail = "; ".join(misses) or f"caught ({score.score:g}/{score.max_score:g})"
    return Outcome(problem.spec.id, "mutant", mutant.path.stem, not misses, detail)


def validate_problems(
    catalog: Catalog, problems: list[Problem], backend: Backend, seed: int, jobs: int
) -> list[Outcome]:
    """Grade every reference, starter and mutant of `problems`."""
    outcomes: list[Outcome] = []
    root = Path(tempfile.mkdtemp(prefix="grader-validate-"))
    try:
        for problem in problems:
            entries: list[tuple[str, str, Path, Mutant | None]] = [
                ("reference", "reference", problem.reference_file, None),
                ("starter", "starter", problem.folder / "starter.py", None),
            ]
            entries += [("mutant", m.path.stem, m.path, m) for m in mutants_of(problem)]
            folders = []
            for kind, name, source, _ in entries:
                folder = root / problem.spec.id / f"{kind}-{name}"
                folder.mkdir(parents=True)
                shutil.copyfile(source, folder / problem.spec.entry)
                folders.append(folder)
            grader = Grader(catalog, [problem], backend, seed)
            try:
                reports = grader.grade_many(folders, jobs)
            finally:
                grader.close()
            for (kind, name, _, mutant), report in zip(entries, reports, strict=True):
                result = report.problem(problem.spec.id)
                full = result.score == result.max_score
                if result.status is ProblemStatus.grader_error:
                    outcomes.append(Outcome(problem.spec.id, kind, name, False, result.message))
                    continue
                if mutant is not None:
                    outcomes.append(judge_mutant(problem, mutant, report))
                elif kind == "reference":
                    failed = [c.name for c in result.checks if c.status is not CheckStatus.passed]
                    detail = (
                        "full marks" if full else f"{result.status}: lost {failed} {result.message}"
                    )
                    outcomes.append(Outcome(problem.spec.id, kind, name, full, detail))
                else:
                    outcomes.append(
                        Outcome(
                            problem.spec.id,
                            kind,
                            name,
                            not full,
                            f"{result.score:g}/{result.max_score:g}",
                        )
                    )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return outcomes
