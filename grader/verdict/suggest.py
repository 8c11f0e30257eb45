"""Near misses: a file, a class or a function named almost as the contract says, and what to
rename or move so that the grader finds it."""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Collection, Iterable

from grader.sandboxing.bindings import bound, top_level
from grader.verdict.checks.scope import SourceFile, Sources

COPY_MARK = re.compile(r"(\s*\(\d+\)|[\s_-]+copy(\s*\d+)?)$", re.IGNORECASE)  # `x (1)`, `x copy`
EXTENSIONS = (".py", ".txt", ".ipynb", ".pdf", ".md")
NOTEBOOK = ".ipynb"
SHOWN = 5  # names listed in one message
SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")
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


def missing_symbol(sources: Sources, entry: str, symbol: str) -> str | None:
    """Why `symbol` could not be found in `entry`, when its source never binds it: the near
    miss to rename, the file of the submission that defines it, or what it defines instead."""
    file: SourceFile | None = sources.files.get(entry)
    tree = file.tree if file is not None else None
    seen = bound(tree) if tree is not None else None
    if seen is None or symbol in seen[0]:
        return None
    defined = seen[1]
    problem = f"{entry} defines no {symbol}"
    near = [name for name in defined if alike(symbol, name)]
    if near:
        return f"{problem}: rename {cut(near[0])} to {symbol} (the contract's name)"
    for path, other in sources.files.items():
        other_names = bound(other.tree) if other.tree is not None and path != entry else None
        if other_names is not None and symbol in other_names[1]:
            return f"{problem}: it is in {cut(path)}; import it there or move it to {entry}"
    if defined:
        return f"{problem} (it defines {listed(defined)}): name it as the contract says"
    return f"{problem}: it defines no class or function"


def missing_import(sources: Sources, entry: str, error: str) -> str:
    """`: split_heads is not in the submission: found SplitHeads.py: rename it to
    split_heads.py`, for the module Python did not find (named in `error`, the candidate's
    process's text: only a module the entry file imports is taken from it) when the candidate
    has a near miss of it among their files; "" otherwise."""
    file = sources.files.get(entry)
    if file is None or file.tree is None:
        return ""
    for node in top_level(file.tree.body):
        modules = []
        if isinstance(node, ast.Import):
            modules = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module.split(".")[0]]
        for module in modules:
            if module in sources.by_module or f"'{module}'" not in error:
                continue
            near = missing_file(f"{module}.py", sources.files)
            if near is not None:
                return f": {module} is not in the submission: {near}"
    return ""


def syntax_error(sources: Sources, entry: str) -> str | None:
    """Where the first file of the entry's scope that Python cannot parse goes wrong, read by
    the host from the bytes handed in: `SyntaxError: invalid syntax at m.py:14, column 22:
    `def forward(self x):``."""
    for file in sources.scope(entry):
        broken = file.unreadable
        if broken is None or not broken.why.startswith(SYNTAX_ERRORS):
            continue
        lines = file.data.splitlines()
        code = ""
        if 0 < broken.line <= len(lines):
            text = lines[broken.line - 1].decode("utf-8", "replace").strip()
            code = f": `{cut(text)}`" if text else ""
        column = f", column {broken.column}" if broken.column else ""
        return f"{broken.why} at {file.path}:{broken.line}{column}{code}"
    return None
