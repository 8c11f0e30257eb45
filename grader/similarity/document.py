"""A submission's code for one problem as a document to fingerprint: the canonical lines of its
entry file and of the submission's modules it imports (helpers inlined where they are called,
whichever file holds them), each line knowing where it came from."""

from __future__ import annotations

import ast
import copy
import re
from bisect import bisect_right
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from grader.sandboxing.staging import MAX_FILES
from grader.similarity.inlining import inline_helpers
from grader.similarity.normalize import assigned_attributes, canonical

MAX_MODULES = MAX_FILES
"""Modules of a submission inlined into one problem's document at most: as many as staging
takes Python files of a submission, so that every module a problem imports is compared (64
empty modules imported first hid a copy, named only in a note); any past it would be named in
the similarity report's notes, never passed over in silence."""
BLANK = re.compile(r"\s+")
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
COMMENT = re.compile(r"#.*")


@dataclass(frozen=True)
class Line:
    """One canonical line: its text, and the lines of the file it stands for."""

    text: str
    file: str
    first: int
    last: int


@dataclass
class Document:
    """The canonical lines of a problem's code, and their text joined for fingerprinting."""

    lines: list[Line]
    text: str = ""
    starts: list[int] = field(default_factory=list)  # each line's offset in `text`
    unread: list[str] = field(default_factory=list)  # modules imported, past `MAX_MODULES`

    def __post_init__(self) -> None:
        offset = 0
        for line in self.lines:
            self.starts.append(offset)
            offset += len(line.text) + 1
        self.text = "\n".join(line.text for line in self.lines)

    def line_at(self, offset: int) -> int:
        """The index of the line holding `offset` of the text."""
        return max(bisect_right(self.starts, offset) - 1, 0)


def compound(node: ast.stmt) -> bool:
    return any(isinstance(getattr(node, part, None), list) for part in ("body", "handlers"))


def header(node: ast.stmt) -> str:
    """A compound statement's first line: `def v(self, x):`, `for v in range(v):`."""
    bare = copy.copy(node)
    for part in ("body", "orelse", "finalbody", "handlers", "cases"):
        if isinstance(getattr(bare, part, None), list):
            setattr(bare, part, [ast.Pass()] if part == "body" else [])
    return ast.unparse(bare).splitlines()[0]


def delegates(node: ast.stmt) -> bool:
    """A function that only passes its arguments on (`return helper(x, n)`): code moved to a
    helper leaves it behind, and it says nothing of the code."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or len(node.body) != 1:
        return False
    (only,) = node.body
    return (
        isinstance(only, ast.Return)
        and isinstance(only.value, ast.Call)
        and all(isinstance(a, ast.Name) for a in only.value.args)
    )


def statement_lines(body: list[ast.stmt], file: str, parent: int) -> Iterator[Line]:
    """The canonical lines of statements, compound ones as their header and their bodies;
    functions that only delegate are left out."""
    for node in body:
        if delegates(node):
            continue
        first = getattr(node, "lineno", parent)
        if not compound(node):
            text = BLANK.sub("", ast.unparse(node))
            yield Line(text, file, first, getattr(node, "end_lineno", None) or first)
            continue
        yield Line(BLANK.sub("", header(node)), file, first, first)
        for part in ("body", "handlers", "orelse", "finalbody"):
            inner = getattr(node, part, None)
            if isinstance(inner, list) and inner:
                if part != "body":
                    yield Line(part, file, first, first)
                if part == "handlers":
                    for handler in inner:
                        yield from statement_lines(handler.body, file, first)
                else:
                    yield from statement_lines(inner, file, first)


def plain_lines(source: str, file: str) -> list[Line]:
    """Code that does not parse, line by line without comments and blanks."""
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        text = BLANK.sub("", COMMENT.sub("", line))
        if text:
            found.append(Line(text, file, number, number))
    return found


def imported(tree: ast.Module) -> list[str]:
    """The top-level modules a module imports, in order."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module.split(".")[0])
    return names


@lru_cache(maxsize=8192)
def imported_by(source: str) -> tuple[str, ...]:
    """`imported` of a module's source that parses: once a file, whatever the problems."""
    return tuple(imported(ast.parse(source)))


@lru_cache(maxsize=8192)
def assigned_by(source: str) -> frozenset[str]:
    """`assigned_attributes` of a module's source that parses: once a file."""
    return frozenset(assigned_attributes(ast.parse(source)))


def module_file(module: str, sources: Mapping[str, str]) -> str | None:
    """The submission's file of a top-level module, if it has one."""
    for name in (f"{module}.py", f"{module}/__init__.py"):
        if name in sources:
            return name
    return None


def unit(entry: str, sources: Mapping[str, str]) -> tuple[dict[str, ast.Module | None], list[str]]:
    """The entry file and each module of the submission it imports (at any depth, each once),
    parsed (None for those that do not parse), as far as `MAX_MODULES`; and the files of the
    modules found imported past it, unread."""
    found: dict[str, ast.Module | None] = {}
    todo = [entry]
    while todo and len(found) < MAX_MODULES:
        file = todo.pop(0)
        try:
            found[file] = ast.parse(sources[file])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            found[file] = None
            continue
        for module in imported_by(sources[file]):
            name = module_file(module, sources)
            if name is not None and name not in found and name not in todo:
                todo.append(name)
    return found, todo


def referenced(nodes: list[ast.stmt]) -> set[str]:
    """Every name and attribute the statements mention: what they may use of a helper module."""
    found: set[str] = set()
    for node in (n for statement in nodes for n in ast.walk(statement)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.alias):
            found.add(node.name.split(".")[-1])
    return found


def defined(statement: ast.stmt) -> set[str]:
    """The names a top-level statement of a helper module defines."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Assign | ast.AnnAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def used_parts(
    entry: str, files: dict[str, ast.Module], symbols: Collection[str] = ()
) -> dict[str, list[ast.stmt]]:
    """The entry file whole, and of each helper module the definitions the code uses (or of
    the problem's `symbols`, which the entry file may import with `*`), followed from use to
    use: a helper's module may hold what other problems use."""
    kept = {entry: list(files[entry].body)}
    wanted = referenced(kept[entry]) | set(symbols)
    grown = True
    while grown:
        grown = False
        for file, tree in files.items():
            have = kept.setdefault(file, [])
            new = [s for s in tree.body if s not in have and defined(s) & wanted]
            if new:
                have += new
                wanted |= referenced(new)
                grown = True
    return {file: sorted(body, key=lambda s: s.lineno) for file, body in kept.items() if body}


def ordered(statements: list[tuple[str, ast.stmt]]) -> list[tuple[str, ast.stmt]]:
    """Statements with their file, definitions last and sorted by their canonical code, methods
    too: the order of functions and methods is a disguise's."""
    for _, node in statements:
        if isinstance(node, ast.ClassDef):
            node.body = [s for _, s in ordered([("", s) for s in node.body])]
    rest = [d for d in statements if not isinstance(d[1], DEFINITIONS)]
    defs = [d for d in statements if isinstance(d[1], DEFINITIONS)]
    return rest + sorted(defs, key=lambda d: ast.dump(d[1]))


def problem_document(
    entry: str,
    sources: Mapping[str, str],
    contract: Collection[str],
    symbols: Collection[str] = (),
) -> Document:
    """The document of the problem whose entry file is `entry` (which defines `symbols`): that
    file, then what it uses of the submission's modules it imports, helpers inlined where they
    are called, in canonical lines; a file that does not parse, as it is."""
    files, unread = unit(entry, sources)
    parsed = {file: tree for file, tree in files.items() if tree is not None}
    if entry not in parsed:
        return Document(plain_lines(sources[entry], entry))
    try:
        return Document(canonical_lines(entry, parsed, sources, contract, symbols), unread=unread)
    except RecursionError:  # code nested too deep for a walk of ours: compared as it is
        return Document(plain_lines(sources[entry], entry))


def canonical_lines(
    entry: str,
    parsed: dict[str, ast.Module],
    sources: Mapping[str, str],
    contract: Collection[str],
    symbols: Collection[str],
) -> list[Line]:
    """`problem_document`'s lines, from the files that parse."""
    assigned = set().union(*(assigned_by(sources[file]) for file in parsed))
    statements: list[tuple[str, ast.stmt]] = []
    used = {f: ast.Module(b, []) for f, b in used_parts(entry, parsed, symbols).items()}
    inline_helpers(used, {*contract, *symbols})
    for file, body in used_parts(entry, used, symbols).items():
        tree = canonical(ast.Module(body, []), contract, assigned)
        statements += [(file, s) for s in tree.body]
    return [line for f, s in ordered(statements) for line in statement_lines([s], f, 1)]
