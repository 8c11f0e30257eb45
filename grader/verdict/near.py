"""Near misses of a name: a file, a class or a function named almost as the contract says, and
the file to rename or move so that the grader finds it. Text only: no source is parsed here."""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping

COPY_MARK = re.compile(r"(\s*\(\d+\)|[\s_-]+copy(\s*\d+)?)$", re.IGNORECASE)  # `x (1)`, `x copy`
EXTENSIONS = (".py", ".txt", ".ipynb", ".pdf", ".md")
NOTEBOOK = ".ipynb"
SHOWN = 5  # names listed in one message
MAX_NAME = 60  # characters of a candidate's name shown


def key(name: str) -> str:
    """A name as a near miss is compared: no folder, extensions or copy marks, lower case,
    letters and digits only (`SplitHeads (1).py.txt` and `split_heads.py` are alike)."""
    stem = name.rsplit("/", 1)[-1]
    while stem.lower().endswith(EXTENSIONS):
        stem = stem[: stem.rfind(".")]
    stem = COPY_MARK.sub("", stem)
    return "".join(c for c in stem.lower() if c.isalnum())


def words(name: str) -> list[str]:
    """`GroupedQueryAttention` and `grouped_query_attention` -> grouped, query, attention."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)]


def initials(name: str) -> str:
    """`GroupedQueryAttention` -> `gqa`, `multi_head_attention` -> `mha`."""
    return "".join(word[0] for word in words(name))


def abbreviated(wanted: str, name: str) -> bool:
    """Whether each word of `name` shortens the same word of `wanted`: its first letter, then
    some of the others in order (`CausalSelfAttn`, `split_hds`)."""
    want, got = words(wanted), words(name)

    def shortens(short: str, word: str) -> bool:
        rest = iter(word[1:])
        return short[0] == word[0] and all(c in rest for c in short[1:])

    return len(got) == len(want) > 1 and all(map(shortens, got, want))


def alike(wanted: str, name: str) -> bool:
    """Whether `name` is a near miss of `wanted`: the same key, one within a few edits, its
    initials, or its words shortened."""
    want, got = key(wanted), key(name)
    if not got:
        return False
    if got == want or got == initials(wanted) or abbreviated(wanted, name):
        return True
    return difflib.SequenceMatcher(None, want, got).ratio() >= 0.85


def nearest(name: str, entries: Iterable[str]) -> str:
    """The entry `name` is most like: the same key first, then the most characters alike."""
    got = key(name)
    return max(entries, key=lambda e: difflib.SequenceMatcher(None, key(e), got).ratio())


def cut(name: str) -> str:
    return name if len(name) <= MAX_NAME else name[: MAX_NAME - 3] + "..."


def listed(names: list[str]) -> str:
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return ", ".join(cut(n) for n in names[:SHOWN]) + more


def missing_file(entry: str, found: Iterable[str], taken: Collection[str] = ()) -> str | None:
    """What to do when `entry` is not in the submission but `found` (its files, by relative
    path) holds a near miss: rename it, move it to the top folder, or save a notebook as
    Python. A file named as another problem's (`taken`: the course's entry files), or more
    like another's name than this one's, is that problem's, never this one's near miss."""
    for path in found:
        name = path.rsplit("/", 1)[-1]
        if not alike(entry, name) or (name in taken and name != entry):
            continue
        if entry in taken and nearest(name, taken) != entry:
            continue  # another problem's near miss more than this one's
        if name.lower().endswith(NOTEBOOK):
            return (
                f"found the notebook {cut(path)}: save it as Python (File > Save and Export "
                f"Notebook As > Executable Script) and hand in {entry}"
            )
        if name == entry:
            return f"found {cut(path)}: move it to the submission's top folder"
        return f"found {cut(path)}: rename it to {entry}"
    return None


def missing_in_notebook(symbol: str, defined: Mapping[str, Iterable[str]]) -> str | None:
    """What to rename when a notebook's module (`defined`: the classes and functions its cells
    define) holds a near miss of `symbol`, the name a problem's file must define."""
    for module, names in defined.items():
        near = [name for name in names if alike(symbol, name)]
        if near and symbol not in near:  # where it is, the notes say why it was not taken
            closest = max(
                near, key=lambda n: difflib.SequenceMatcher(None, key(symbol), key(n)).ratio()
            )
            return (
                f"the notebook's module {cut(module)} defines no {symbol}: rename "
                f"{cut(closest)} to {symbol} (the contract's name)"
            )
    return None
