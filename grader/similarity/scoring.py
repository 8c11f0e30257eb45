"""Pairs of a problem's documents scored from an inverted index of their fingerprints, and judged
against the class's own distribution of scores for that problem.

A fingerprint weighs what it tells: log(N / df), N documents of which df hold it; what every
document holds weighs nothing. The course's code (reference, accepted solutions) is expected: a
fingerprint of it counts as held by `EXPECTED` of the class more, which lowers the weight it
adds to a pair (never the document's own). A pair's score is the weight the two share over the
weight of the lighter one: 1 when one holds all of the other's code and none of it is the
course's, below 1 for identical documents like the course's code. It stands out when far
above the problem's usual (a robust z-score, against the median and the median absolute
deviation of every pair's score), and is flagged where a person should look (`flagged`): it
stands out in two problems or more, or very far in one, or in one with a wide gap between it
and the bulk of the class's pairs. A class too small to make a distribution is judged on the
score alone.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from grader.reports.similarity import FLAG_CLASS, FLAG_GAP, FLAG_Z, SMALL_CLASS_SCORE
from grader.similarity.fingerprints import Fingerprints

EXPECTED = 0.25
"""The course's code counts as written by this share of the class as well."""
MIN_SPREAD = 0.05
"""The least spread (1.4826 MAD) a z-score is taken against: a class of near-identical scores
does not make a small difference unusual."""
MAX_SHARED = 0.5
LARGE_CLASS = 20
"""In a class this large, fingerprints held by more than `MAX_SHARED` of it weigh nothing
(instead of under log 2): the index skips them, keeping pairs out of a quadratic blow-up."""


@dataclass(frozen=True)
class Scored:
    """A pair of documents (by index), its score, robust z-score (NaN in a class too small
    to judge against) and whether a gap of `FLAG_GAP` or more parts it from the bulk of its
    problem's pairs (`above_bulk`)."""

    a: int
    b: int
    score: float
    z: float
    apart: bool = False

    @property
    def outlying(self) -> bool:
        """Far above its problem's usual: it counts as the pair standing out there."""
        return self.z >= FLAG_Z


def flagged(pair: Scored, outlying_problems: int) -> bool:
    """Whether a person should look at the pair, given the number of problems of the class in
    which the same two submissions stand out (`Scored.outlying`, this one included).

    Standing out in two problems or more (a pair that copied several problems), the pair is
    flagged in each where it stands out; standing out in this problem alone, only twice as far
    (two students may think alike on one problem: an honest pair was seen at a z-score of 8,
    copies of one problem at 15), or where a gap of `FLAG_GAP` parts it from the bulk of the
    class (copies of one problem, enough of them to widen the spread, keep each one's z-score low).
    Never below the bar of standing out: two students alike in a few problems are not flagged
    where they are ordinary. Where the class is too small for a distribution, on its score
    alone, at `SMALL_CLASS_SCORE`."""
    if math.isnan(pair.z):
        return pair.score >= SMALL_CLASS_SCORE
    if outlying_problems >= 2:
        return pair.outlying
    return pair.z >= 2 * FLAG_Z or (pair.outlying and pair.apart)


def above_bulk(scores: np.ndarray) -> float:
    """The least score a pair needs to be parted from the bulk of `scores` by `FLAG_GAP`: the
    first score above a gap that wide, from the median up and from the lowest pair sharing
    anything (a pair that shares nothing shows no spread to stand above); inf where none."""
    ordered = np.sort(scores)
    upper = ordered[ordered.size // 2 :]
    upper = upper[upper > 0]
    gaps = np.flatnonzero(np.diff(upper) >= FLAG_GAP)
    return float(upper[gaps[0] + 1]) if gaps.size else math.inf


def weight(held: float, total: float) -> float:
    """What a fingerprint held by `held` of `total` documents weighs; in a class too small for a
    distribution, smoothed (log((N + 1) / df)): two submissions alike still share something."""
    if not held or (total >= LARGE_CLASS and held > MAX_SHARED * total):
        return 0.0
    if total < FLAG_CLASS:
        return math.log((total + 1) / held)
    return max(0.0, math.log(total / held))


def score_pairs(documents: Sequence[Fingerprints], expected: Collection[int]) -> list[Scored]:
    """Every pair of documents that shares a fingerprint worth anything, most similar first;
    pairs left out score 0 (they count in the distribution all the same)."""
    count = len(documents)
    postings: dict[int, list[int]] = defaultdict(list)
    for index, prints in enumerate(documents):
        for value in prints:
            postings[value].append(index)
    extra = EXPECTED * count

    def shared_weight(value: int, held: int) -> float:
        plain = weight(held, count)
        return min(plain, weight(held + extra, count + extra)) if value in expected else plain

    mass = [sum(weight(len(postings[v]), count) for v in prints) for prints in documents]
    shared: dict[tuple[int, int], float] = defaultdict(float)
    for value, holders in postings.items():
        adds = shared_weight(value, len(holders)) if len(holders) > 1 else 0.0
        if adds > 0:
            for i, a in enumerate(holders):
                for b in holders[i + 1 :]:
                    shared[a, b] += adds
    scores = {
        pair: min(1.0, total / lighter)
        for pair, total in shared.items()
        if (lighter := min(mass[pair[0]], mass[pair[1]])) > 0
    }
    zeros = count * (count - 1) // 2 - len(scores)
    every = np.concatenate([np.fromiter(scores.values(), float), np.zeros(max(zeros, 0))])
    middle = float(np.median(every)) if every.size else 0.0
    spread = (
        max(1.4826 * float(np.median(np.abs(every - middle))), MIN_SPREAD)
        if every.size
        else MIN_SPREAD
    )
    small = count < FLAG_CLASS  # no distribution to judge against: no z-score
    apart = math.inf if small else above_bulk(every)
    ranked = [
        Scored(a, b, s, math.nan if small else (s - middle) / spread, s >= apart)
        for (a, b), s in scores.items()
        if s > 0
    ]
    return sorted(ranked, key=lambda p: (-p.score, p.a, p.b))
