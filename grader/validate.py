"""Validating a course, both ways: references and the accepted solutions of
`problems/<id>/accepted/` score full marks, starters do not, and every mutant in
`problems/<id>/mutants/` loses points on the check it declares, with the diagnosis it declares.

Each is graded as a candidate hands it in: its file swapped into an otherwise complete correct
submission (every reference), so a mistake in one file is shown to cost that problem only.

A mutant is a one-file wrong submission whose header declares what it must fail, and the
mistake it is diagnosed with by a check candidates see (`expect-hidden-diagnosis`: by a hidden
check, which only instructors see):

    # expect-fail: matches the reference (float32)
    # expect-diagnosis: no_scale
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from grader.courses.catalog import Catalog, Problem
from grader.economy import Economy, Graded, ProbeWorth
from grader.grade import Grader
from grader.reports.models import CheckReport, CheckStatus, ProblemStatus, SubmissionReport
from grader.reports.text import fraction
from grader.sandboxing.backends.base import Backend, LimitOverrides
from grader.specs.problem import SpecError, Visibility
from grader.verdict.diagnose import MISTAKES

HEADER = re.compile(r"^#\s*expect-(fail|diagnosis|hidden-diagnosis):\s*(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Mutant:
    path: Path
    fails: list[str]
    diagnoses: list[str]  # made by a visible check
    hidden_diagnoses: list[str]  # made by a check, whatever its visibility


@dataclass
class Outcome:
    problem: str
    kind: str  # reference, accepted, starter or mutant
    name: str
    ok: bool
    detail: str


def read_mutant(path: Path, known: Collection[str] = MISTAKES) -> Mutant:
    found = HEADER.findall(path.read_text(encoding="utf-8"))
    fails = [v for k, v in found if k == "fail"]
    if not fails:
        raise SpecError(f"{path}: no '# expect-fail: CHECK NAME' header")
    diagnoses = [v for k, v in found if k == "diagnosis"]
    hidden = [v for k, v in found if k == "hidden-diagnosis"]
    unknown = [d for d in diagnoses + hidden if d not in known]
    if unknown:
        raise SpecError(
            f"{path}: expect-diagnosis: no mistake named {', '.join(map(repr, unknown))} "
            f"(known: {', '.join(sorted(known))})"
        )
    return Mutant(path, fails, diagnoses, hidden)


def mutants_of(problem: Problem) -> list[Mutant]:
    known = problem.diagnoses.mistakes
    return [read_mutant(p, known) for p in sorted((problem.folder / "mutants").glob("*.py"))]


def judge_mutant(problem: Problem, mutant: Mutant, report: SubmissionReport) -> list[str]:
    """What the mutant failed to show: a declared check it passed, a diagnosis not made."""
    return mutant_misses(mutant, report.problem(problem.spec.id).checks)


def mutant_misses(mutant: Mutant, reports: list[CheckReport]) -> list[str]:
    """What the mutant's problem's check reports fail to show: a declared check it passed, a
    diagnosis not made."""
    checks = {c.name: c for c in reports}
    misses = []
    for name in mutant.fails:
        check = checks.get(name)
        if check is None:
            misses.append(f"no check named {name!r}")
        elif check.status is CheckStatus.passed:
            misses.append(f"passed {name!r}")
    got = {c.diagnosis.mistake for c in checks.values() if c.diagnosis and c.diagnosis.mistake}
    shown = {
        c.diagnosis.mistake
        for c in checks.values()
        if c.diagnosis and c.diagnosis.mistake and c.visibility is Visibility.visible
    }
    for declared in mutant.diagnoses + mutant.hidden_diagnoses:
        if declared not in got:
            misses.append(f"no diagnosis {declared!r} (got {sorted(got) or 'none'})")
        elif declared in mutant.diagnoses and declared not in shown:
            misses.append(
                f"diagnosis {declared!r} made by hidden checks only, which no candidate sees "
                "(declare it with expect-hidden-diagnosis if that is meant)"
            )
    return misses


def others_lost(problem: Problem, report: SubmissionReport) -> list[str]:
    """The correct files around the swapped one that did not score full marks."""
    return [
        f"{p.problem} lost points ({fraction(p.score, p.max_score)}, {p.status})"
        for p in report.problems
        if p.problem != problem.spec.id and p.score != p.max_score
    ]


def judge_entry(
    problem: Problem, kind: str, mutant: Mutant | None, report: SubmissionReport
) -> str:
    """An empty string when the entry shows what it must, else what went wrong."""
    result = report.problem(problem.spec.id)
    if result.status is ProblemStatus.grader_error:
        return f"grader error: {result.message[:300]}"
    full = result.score == result.max_score
    misses = others_lost(problem, report)
    if mutant is not None:
        misses += judge_mutant(problem, mutant, report)
    elif kind in ("reference", "accepted") and not full:
        failed = [c.name for c in result.checks if c.status is not CheckStatus.passed]
        misses.append(f"{result.status}: lost {failed} {result.message}")
    elif kind == "starter" and full:
        misses.append("the starter scores full marks")
    return "; ".join(misses)


def weigh(
    grader: Grader,
    entries: list[tuple[Problem, str, str, Path, Mutant | None]],
    folders: list[Path],
) -> dict[str, list[ProbeWorth]]:
    """Each problem's probes weighed on its references, accepted solutions and mutants, as
    `grader` graded them (their runs kept)."""
    kept = grader.kept or {}
    graded: dict[str, list[Graded]] = {}
    for (problem, kind, name, _, mutant), folder in zip(entries, folders, strict=True):
        runs = kept.get(folder, {})
        if kind != "starter" and problem.spec.id in runs:
            run, sources = runs[problem.spec.id]
            misses = None if mutant is None else partial(mutant_misses, mutant)
            graded.setdefault(problem.spec.id, []).append(
                Graded(f"{kind} {name}", run, sources, misses)
            )
    return {pid: Economy(grader.prepared[pid], items).weigh() for pid, items in graded.items()}


def complete_submission(catalog: Catalog, folder: Path) -> None:
    """Every problem's reference under its entry name: a complete correct submission."""
    folder.mkdir(parents=True)
    for problem in catalog.problems.values():
        shutil.copyfile(problem.reference_file, folder / problem.spec.entry)


def validate_problems(
    catalog: Catalog,
    problems: list[Problem],
    backend: Backend,
    seed: int,
    jobs: int,
    limits: LimitOverrides | None = None,
    probes: dict[str, list[ProbeWorth]] | None = None,
) -> list[Outcome]:
    """Grade every reference, accepted solution, starter and mutant of `problems`, each in a
    complete submission; with `probes`, weigh each problem's probes on them there
    (`grader.economy`)."""
    entries: list[tuple[Problem, str, str, Path, Mutant | None]] = []
    for problem in problems:
        entries += [
            (problem, "reference", "reference", problem.reference_file, None),
            (problem, "starter", "starter", problem.folder / "starter.py", None),
        ]
        entries += [(problem, "accepted", p.stem, p, None) for p in problem.accepted]
        entries += [(problem, "mutant", m.path.stem, m.path, m) for m in mutants_of(problem)]
    root = Path(tempfile.mkdtemp(prefix="grader-validate-"))
    try:
        complete = root / "complete"
        complete_submission(catalog, complete)
        folders = []
        for problem, kind, name, source, _ in entries:
            folder = root / problem.spec.id / f"{kind}-{name}"
            shutil.copytree(complete, folder)
            shutil.copyfile(source, folder / problem.spec.entry)
            folders.append(folder)
        with Grader(catalog, list(catalog.problems.values()), backend, seed, limits) as grader:
            grader.kept = {} if probes is not None else None
            reports = grader.grade_many(folders, jobs)
            if probes is not None:
                probes.update(weigh(grader, entries, folders))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    outcomes = []
    for (problem, kind, name, _, mutant), report in zip(entries, reports, strict=True):
        miss = judge_entry(problem, kind, mutant, report)
        result = report.problem(problem.spec.id)
        detail = miss or f"{fraction(result.score, result.max_score)}; the rest full marks"
        outcomes.append(Outcome(problem.spec.id, kind, name, not miss, detail))
    return outcomes
