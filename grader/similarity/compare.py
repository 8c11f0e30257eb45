"""A class compared, problem by problem: each submission's document fingerprinted less the
starter's, pairs scored against the class, flagged on the evidence of every problem (two
submissions that stand out in several problems), the top ones laid side by side."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.reports.similarity import (
    FLAG_CLASS,
    CodeFile,
    CodeLine,
    SideBySide,
    Similarity,
    SimilarPair,
)
from grader.similarity.document import MAX_MODULES, Document, problem_document
from grader.similarity.fingerprints import Fingerprints, K, fingerprints
from grader.similarity.normalize import contract
from grader.similarity.reading import Candidate, read_class
from grader.similarity.scoring import Scored, flagged, score_pairs

if TYPE_CHECKING:
    from grader.courses.catalog import Catalog, Problem

SHOWN = 5
"""Pairs of a problem shown side by side at most: its most similar."""
KEPT_PER_SUBMISSION = 5
"""A problem's pairs kept: the flagged ones, and the most similar up to this many times its
submissions (a class of 500 shares code in 100,000s of pairs, mostly a little)."""
MAX_SHOWN_LINES = 300
"""Lines of a file shown side by side at most."""


@dataclass(frozen=True)
class Entry:
    """A submission's document for a problem, and its fingerprints."""

    candidate: Candidate
    document: Document
    prints: Fingerprints


def course_document(path: Path, attributes: frozenset[str]) -> Document:
    return problem_document(path.name, {path.name: path.read_text(encoding="utf-8")}, attributes)


def compare_problem(
    problem: Problem, candidates: Sequence[Candidate], notes: list[str]
) -> list[tuple[Scored, Entry, Entry]]:
    """The pairs of the submissions that hand in the problem's entry file, most similar first;
    the modules a submission's file imports that were not compared go to `notes`."""
    entry = problem.spec.entry
    attributes = contract(problem.starter)
    starter = problem_document("starter.py", {"starter.py": problem.starter}, attributes)
    boilerplate = set(fingerprints(starter.text))
    expected: set[int] = set()
    for path in [problem.reference_file, *problem.accepted]:
        expected |= set(fingerprints(course_document(path, attributes).text, boilerplate))
    entries = []
    for one in candidates:
        if entry in one.sources:
            document = problem_document(entry, one.sources, attributes, problem.spec.symbols)
            if document.unread:
                notes.append(
                    f"{one.name}: {problem.spec.id}: {len(document.unread)} module(s) of those "
                    f"{entry} imports not compared (past the {MAX_MODULES} modules compared for "
                    f"one problem): {', '.join(document.unread[:10])}"
                )
            entries.append(Entry(one, document, fingerprints(document.text, boilerplate)))
    scored = score_pairs([e.prints for e in entries], expected)
    return [(s, entries[s.a], entries[s.b]) for s in scored]


def matched_lines(entry: Entry, shared: set[int]) -> dict[str, set[int]]:
    """The lines of each file that hold the fingerprints of `shared`."""
    found: dict[str, set[int]] = {}
    lines = entry.document.lines
    for value in shared:
        for offset in entry.prints[value]:
            first, last = entry.document.line_at(offset), entry.document.line_at(offset + K - 1)
            for line in lines[first : last + 1]:
                found.setdefault(line.file, set()).update(range(line.first, line.last + 1))
    return found


def side(entry: Entry, shared: set[int]) -> list[CodeFile]:
    marked = matched_lines(entry, shared)
    files = []
    for file in dict.fromkeys(line.file for line in entry.document.lines):
        text = entry.candidate.sources[file].splitlines()[:MAX_SHOWN_LINES]
        hits = marked.get(file, set())
        files.append(CodeFile(file, [CodeLine(n, t, n in hits) for n, t in enumerate(text, 1)]))
    return files


def compare_class(path: Path, catalog: Catalog, problems: Sequence[str] = ()) -> Similarity:
    """Every problem's pairs of the class in `path`, and its top pairs side by side."""
    result = Similarity()
    candidates = read_class(path, catalog, result.notes)
    result.read = [note for c in candidates for note in c.made]
    kept = KEPT_PER_SUBMISSION * len(candidates)
    compared = []
    outlying: Counter[frozenset[str]] = Counter()
    for problem in catalog.select(list(problems)):
        ranked = compare_problem(problem, candidates, result.notes)
        compared.append((problem, ranked))
        handed_in = sum(problem.spec.entry in c.sources for c in candidates)
        if 2 <= handed_in < FLAG_CLASS:
            result.small[problem.spec.id] = handed_in
        outlying.update(names(a, b) for scored, a, b in ranked if scored.outlying)
    for problem, ranked in compared:
        for rank, (scored, a, b) in enumerate(ranked):
            look = flagged(scored, outlying[names(a, b)])
            if rank >= kept and not look:
                continue
            pair = SimilarPair(
                problem=problem.spec.id,
                a=a.candidate.name,
                b=b.candidate.name,
                score=round(scored.score, 3),
                flagged=look,
            )
            result.pairs.append(pair)
            if rank < SHOWN:
                shared = set(a.prints) & set(b.prints)
                result.shown.append(SideBySide(pair, side(a, shared), side(b, shared)))
    return result


def names(a: Entry, b: Entry) -> frozenset[str]:
    return frozenset((a.candidate.name, b.candidate.name))
