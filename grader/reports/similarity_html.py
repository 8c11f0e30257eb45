"""The class report's similarity section: per problem, the pairs of submissions ranked by
similarity, those a person should look at flagged, the top ones side by side with the matching
lines marked. Shown only where some pair shares code."""

from __future__ import annotations

from itertools import groupby

from grader.reports.safe import html as escape
from grader.reports.similarity import (
    FLAG_CLASS,
    FLAG_Z,
    SMALL_CLASS_SCORE,
    CodeFile,
    SideBySide,
    Similarity,
    SimilarPair,
    limited_lines,
)

STYLE = """
.pair { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1em; }
.pair pre { max-height: 30em; white-space: pre; overflow: auto; font-size: 12px;
            line-height: 1.35; overflow-wrap: normal; }
.pair .hit { background: #ffe08a; display: inline-block; min-width: 100%; }
.pair .no { color: #999; user-select: none; }
.flag { color: #c62828; font-weight: 600; }
@media (max-width: 760px) { .pair { grid-template-columns: minmax(0, 1fr); } }
"""
LISTED = 10
"""Pairs of a problem listed in its table at most (all flagged ones besides)."""


def similarity_section(similarity: Similarity | None) -> list[str]:
    """The section's parts, none where no pair shares code."""
    if similarity is None or not similarity.pairs:
        return []
    flagged = sum(p.flagged for p in similarity.pairs)
    parts = [
        f"<style>{STYLE}</style>",
        '<h2 id="similarity">Similarity</h2>',
        f"<p>{flagged} pair(s) flagged for a look. A pair's score is the share of the lighter "
        "submission's unusual code the two share (the starter's code counts for nothing, the "
        "course's solutions for little; helpers are read as if written where they are "
        f"called). A pair stands out in a problem at a robust z-score of {FLAG_Z:g} or more "
        "against all that problem's pairs in this class (median and median absolute "
        "deviation). It is flagged where it stands out and the same two stand out in another "
        f"problem too, or where its z-score is {2 * FLAG_Z:g} or more in one problem alone; "
        f"where fewer than {FLAG_CLASS} submissions hand a problem in, at a score of "
        f"{SMALL_CLASS_SCORE:.2f} or more. It ranks pairs for a person to read: "
        "no score changes.</p>",
    ]
    parts += [
        f'<p class="flag">Flagging limited: {escape(line)}.</p>'
        for line in limited_lines(similarity)
    ]
    shown = {(s.pair.problem, s.pair.a, s.pair.b): s for s in similarity.shown}
    for problem, group in groupby(similarity.pairs, key=lambda p: p.problem):
        pairs = list(group)
        listed = [p for i, p in enumerate(pairs) if i < LISTED or p.flagged]
        parts += [f"<h3>{escape(problem)}</h3>", pairs_table(listed)]
        parts += [
            side_by_side(shown[key])
            for key in ((p.problem, p.a, p.b) for p in listed)
            if key in shown
        ]
    parts += [
        notes_list(title, notes)
        for title, notes in (("Read of notebooks", similarity.read), ("Left out", similarity.notes))
        if notes
    ]
    return parts


def notes_list(title: str, notes: list[str]) -> str:
    """Notes folded under their title and count."""
    items = "".join(f"<li>{escape(n)}</li>" for n in notes)
    return f"<details><summary>{title} ({len(notes)})</summary><ul>{items}</ul></details>"


FLAG = '<span class="flag">flagged</span>'


def pairs_table(pairs: list[SimilarPair]) -> str:
    rows = "".join(
        f'<tr><td class="n">{p.score:.2f}</td><td class="text">{escape(p.a)}</td>'
        f'<td class="text">{escape(p.b)}</td>'
        f"<td>{FLAG if p.flagged else ''}</td></tr>"
        for p in pairs
    )
    return (
        '<div class="wide"><table class="similar"><thead><tr><th>score</th><th>submission</th>'
        f"<th>submission</th><th></th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def code(files: list[CodeFile]) -> str:
    blocks = []
    for file in files:
        lines = "\n".join(
            f'<span class="no">{line.number:>4} </span>'
            + (
                f'<span class="hit">{escape(line.text)}</span>'
                if line.matched
                else escape(line.text)
            )
            for line in file.lines
        )
        blocks.append(f"<small>{escape(file.name)}</small><pre>{lines}</pre>")
    return f"<div>{''.join(blocks)}</div>"


def side_by_side(shown: SideBySide) -> str:
    pair = shown.pair
    mark = f" {FLAG}" if pair.flagged else ""
    summary = f"{escape(pair.a)} and {escape(pair.b)}: {pair.score:.2f}{mark}"
    return (
        f'<details class="pair-view"{" open" if pair.flagged else ""}><summary>{summary}</summary>'
        f'<div class="pair">{code(shown.left)}{code(shown.right)}</div></details>'
    )
