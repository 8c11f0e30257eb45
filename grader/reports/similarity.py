"""Similarity across a class, as reports hold it: the ranked pairs of submissions per problem
(`similarity.json`, with its published JSON schema), and for the HTML class report the pairs
shown side by side. It ranks pairs for a person to read: it changes no score."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from grader.names import GRADER_OWNED

SIMILARITY_FILE = "similarity.json"
"""Where `grader similarity --out DIR` writes the pairs."""
CLASS_PAIRS_FILE = f"{GRADER_OWNED}-similarity.json"
"""Where `grade --format html` writes them, beside the reports (a name no report takes)."""
VIEW_FILE = f"{GRADER_OWNED}-similarity-view.json"
"""The class report's similarity section as `grade` rendered it (its code side by side), for
`grader report` to render again without the submissions."""
FLAG_Z = 6.0
"""The robust z-score at which a pair stands out from its problem's pairs."""
FLAG_GAP = 0.4
"""The least gap in score between a pair that stands out and the bulk of its problem's pairs
(every pair from the median up to the first gap this wide) for it to be flagged on this
problem alone: copies of one problem were seen at 0.64 over honest pairs up to 0.13, while
honest pairs that stand out come with others close below them (0.61 over 0.35)."""
FLAG_CLASS = 8
"""The fewest submissions of a problem whose pairs make a distribution to judge against."""
SMALL_CLASS_SCORE = 0.8
"""In a smaller class, the least score flagged: most of the lighter document's unusual code
shared (identical files close to the course's solutions score from 0.82 in a class of 2 to 5,
honest pairs up to 0.65)."""


class SimilarPair(BaseModel):
    """Two submissions' code for one problem, how alike, and whether a person should look."""

    model_config = ConfigDict(extra="forbid")

    problem: str = Field(description="The problem's id.")
    a: str = Field(description="A submission's name, as in the gradebook.")
    b: str = Field(description="The other submission's name, as in the gradebook.")
    score: float = Field(
        ge=0,
        le=1,
        description="The share of the lighter submission's unusual code the two share: "
        "code of the starter counts for nothing, of the course's solutions for little.",
    )
    flagged: bool = Field(
        description="A person should look: the two stand out (a robust z-score of 6 or more "
        "against this problem's pairs in this class) here and in another problem, or twice as "
        "far in this problem alone; where fewer than 8 submissions "
        "hand the problem in, a score of 0.8 or more. Never a verdict."
    )


PAIRS = TypeAdapter(list[SimilarPair])


def similarity_schema() -> dict[str, Any]:
    """The published JSON schema of `similarity.json`: a list of pairs, most similar first."""
    return PAIRS.json_schema()


def write_pairs(pairs: list[SimilarPair], out_dir: Path, name: str = SIMILARITY_FILE) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / name
    path.write_bytes(PAIRS.dump_json(pairs, indent=2) + b"\n")
    return path


@dataclass(frozen=True)
class CodeLine:
    number: int
    text: str
    matched: bool


@dataclass(frozen=True)
class CodeFile:
    """A file of a submission as the side-by-side view shows it, matching lines marked."""

    name: str
    lines: list[CodeLine]


@dataclass(frozen=True)
class SideBySide:
    pair: SimilarPair
    left: list[CodeFile]
    right: list[CodeFile]


@dataclass
class Similarity:
    """A class compared: every pair that shares anything, most similar first within each
    problem; the pairs shown side by side; what was left out, and why (`notes`); what was read
    of notebooks (`read`: a notebook's code cells, names imported from such a module)."""

    pairs: list[SimilarPair] = field(default_factory=list)
    shown: list[SideBySide] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    small: dict[str, int] = field(default_factory=dict)
    """The problems handed in by too few submissions to judge a pair against the others', and
    how many: their pairs are flagged on the score alone, only when most of it is shared."""


def limited_lines(similarity: Similarity) -> list[str]:
    """What flagging could not do, said: the problems too few submissions hand in."""
    return [
        f"{problem}: {count} submissions, too few (under {FLAG_CLASS}) to judge a pair against "
        f"the class; a pair is flagged only at a score of {SMALL_CLASS_SCORE:.2f} or more"
        for problem, count in similarity.small.items()
    ]


def summary_lines(similarity: Similarity, top: int) -> list[str]:
    """Each problem's `top` most similar pairs and every flagged one, then what was read of
    notebooks and what was left out."""
    lines, seen = [], dict[str, int]()
    for pair in similarity.pairs:
        rank = seen[pair.problem] = seen.get(pair.problem, 0) + 1
        if rank == 1:
            lines.append(pair.problem)
        if rank <= top or pair.flagged:
            mark = "  FLAGGED: look" if pair.flagged else ""
            lines.append(f"  {pair.score:.2f}  {pair.a}  {pair.b}{mark}")
    flagged = sum(p.flagged for p in similarity.pairs)
    lines.append(f"{flagged} pair(s) flagged of {len(similarity.pairs)} sharing code")
    lines += [f"flagging limited: {line}" for line in limited_lines(similarity)]
    lines += [f"read: {note}" for note in similarity.read]
    return lines + [f"left out: {note}" for note in similarity.notes]


VIEW = TypeAdapter(Similarity)


def write_view(similarity: Similarity, out_dir: Path) -> Path:
    path = out_dir / VIEW_FILE
    path.write_bytes(VIEW.dump_json(similarity) + b"\n")
    return path


def read_view(out_dir: Path) -> Similarity | None:
    """The similarity section `grade` saved in `out_dir`, None if it saved none; a ValueError
    says why a saved one cannot be read."""
    path = out_dir / VIEW_FILE
    return VIEW.validate_json(path.read_bytes()) if path.is_file() else None
