"""Similarity across a class, as reports hold it: the ranked pairs of submissions per problem
(`similarity.json`, with its published JSON schema), and for the HTML class report the pairs
shown side by side. It ranks pairs for a person to read: it changes no score."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

SIMILARITY_FILE = "similarity.json"


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
        description="Far above this problem's usual score in this class, and high in itself: "
        "a person should look. Never a verdict."
    )


PAIRS = TypeAdapter(list[SimilarPair])


def similarity_schema() -> dict[str, Any]:
    """The published JSON schema of `similarity.json`: a list of pairs, most similar first."""
    return PAIRS.json_schema()


def write_pairs(pairs: list[SimilarPair], out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / SIMILARITY_FILE
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
    problem; the pairs shown side by side; what was left out, and why."""

    pairs: list[SimilarPair] = field(default_factory=list)
    shown: list[SideBySide] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def summary_lines(similarity: Similarity, top: int) -> list[str]:
    """Each problem's `top` most similar pairs and every flagged one, then what was left out."""
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
    return lines + [f"left out: {note}" for note in similarity.notes]
