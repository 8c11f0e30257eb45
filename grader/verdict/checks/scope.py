"""Which of a submission's files a problem reaches: its entry file and the candidate's own
modules it imports, transitively, however imported."""

from __future__ import annotations

import ast
import contextlib
import io
import re
import sys
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from grader.sandboxing.parsetime import too_slow
from grader.verdict.checks.bindings import called, import_bindings, literal_at

# Names Python finds in the image before the submission's folder, which comes last on the import
# path, where the image has them: followed by `python_loop`, never left out of a scope.
SHADOWED = set(sys.stdlib_module_names) | {"torch", "numpy", "safetensors"}
IMPORTERS = {"import_module", "__import__"}
NAME_LITERAL = re.compile(r"""[rRuU]?(['"])([\w.]+)\1""")
"""A one-line string literal of a (dotted) name, without escapes: `"mask"`, `'heads.0'`."""
# What the grader reads at all: past these, a file is unreadable (and fails `forbidden_api`).
MAX_BYTES = 1 << 20
MAX_LINES = 20_000
MAX_BRACKETS = 100  # brackets open at once (Python allows 200)
# Levels of a syntax tree (honest files here: under 20); any walker over one stays far from
# Python's recursion limit.
MAX_TREE_DEPTH = 200
TOO_DEEP = "nested too deeply for the grader to read"
# Nodes of a syntax tree, which every check walks (honest code has about 3 a line: torch's
# own `functional.py`, 7,284 lines, has 20,665).
MAX_NODES = 100_000
OPENING, CLOSING = set("([{"), set(")]}")


@dataclass(frozen=True)
class Unreadable:
    """Why the grader cannot read a file, and where."""

    line: int
    why: str
    column: int = 0  # where on the line, from 1, where the parser says


def module_name(path: str) -> str:
    """`pkg/mod.py` -> `pkg.mod`; `pkg/__init__.py` -> `pkg`."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def over_limits(data: bytes) -> Unreadable | None:
    """A limit the file breaks, found before parsing: size, lines, brackets open at once."""
    if len(data) > MAX_BYTES:
        return Unreadable(0, f"{len(data)} bytes, over the grader's limit of {MAX_BYTES}")
    if len(data.splitlines()) > MAX_LINES:
        return Unreadable(MAX_LINES, f"over {MAX_LINES} lines")
    line = deep_brackets(data)
    return None if line is None else Unreadable(line, TOO_DEEP)


def deep_brackets(data: bytes) -> int | None:
    """The line where more than `MAX_BRACKETS` brackets are open at once, if any. Text the
    tokenizer refuses is left to the parser, whose message is Python's own."""
    depth = 0
    with contextlib.suppress(SyntaxError, ValueError, tokenize.TokenError):
        for token in tokenize.tokenize(io.BytesIO(data).readline):
            if token.type == tokenize.OP:
                depth += (token.string in OPENING) - (token.string in CLOSING)
                if depth > MAX_BRACKETS:
                    return token.start[0]
    return None


def too_big(tree: ast.AST) -> str | None:
    """Why the grader does not walk a tree (over `MAX_TREE_DEPTH` levels, over `MAX_NODES`
    nodes), found without recursion; None when it does."""
    stack, seen = [(tree, 1)], 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if depth > MAX_TREE_DEPTH:
            return TOO_DEEP
        if seen > MAX_NODES:
            return f"over {MAX_NODES} syntax nodes, the grader's limit"
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return None


def unparsable(exc: Exception) -> Unreadable:
    if isinstance(exc, RecursionError | MemoryError):
        return Unreadable(0, TOO_DEEP)
    if isinstance(exc, SyntaxError):
        return Unreadable(exc.lineno or 0, f"{type(exc).__name__}: {exc.msg}", exc.offset or 0)
    return Unreadable(0, f"{type(exc).__name__}: {exc}")


def parse(data: bytes, name: str) -> ast.Module | Unreadable:
    """The file's tree, read as Python reads the bytes (a byte-order mark, a `# coding:`
    declaration), or why the grader cannot read it: whatever the parser raises is caught."""
    broken = over_limits(data)
    if broken is not None:
        return broken
    slow = too_slow(data)
    if slow is not None:
        return Unreadable(0, slow)
    try:
        tree = ast.parse(data, filename=name)
    except Exception as exc:  # anything the parser raises: the file is unreadable
        return unparsable(exc)
    why = too_big(tree)
    return tree if why is None else Unreadable(0, why)


def with_parents(dotted: str) -> list[str]:
    """`a.b.c` -> `a`, `a.b`, `a.b.c`: importing a module imports its packages."""
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def imported_names(
    nodes: list[ast.AST], module: str, is_package: bool, bindings: dict[str, str]
) -> set[str]:
    """Every module name a file imports (`nodes` are all of its nodes): statements at any
    depth, and `importlib.import_module("x")` / `__import__("x")` with a literal name."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.update(with_parents(alias.name))
        elif isinstance(node, ast.ImportFrom):
            target = absolute(node.module or "", node.level, package)
            if target is None:
                continue
            if target:
                found.update(with_parents(target))
            found.update(f"{target}.{a.name}".lstrip(".") for a in node.names if a.name != "*")
        elif isinstance(node, ast.Call) and (name := imported_by_call(node, bindings, package)):
            found.update(with_parents(name))
    return found


def absolute(name: str, level: int, package: list[str]) -> str | None:
    """The module `from {level dots}{name} import ...` names in `package`; None past the top."""
    if level > len(package) + 1:
        return None
    base = package[: len(package) - level + 1] if level else []
    return ".".join([*base, *([name] if name else [])])


def imported_by_call(node: ast.Call, bindings: dict[str, str], package: list[str]) -> str:
    """The module a call imports by a literal name (`import_module("x")`, `__import__("x")`,
    `import_module(".x", "pkg")`: relative to the file's package unless one is given), or ""."""
    name = literal_at(node, 0, "name")
    if called(node, bindings) not in IMPORTERS or not name:
        return ""
    stripped = name.lstrip(".")
    level = len(name) - len(stripped)
    if level and literal_at(node, 1, "package"):
        package = literal_at(node, 1, "package").split(".")
    return absolute(stripped, level, package) or ""


@dataclass(frozen=True)
class SourceFile:
    path: str
    module: str
    data: bytes  # as handed in: Python decodes it itself
    memo: dict[object, object] = field(default_factory=dict, compare=False, repr=False)
    """What a check found in the file, by what it asked: each problem whose scope holds the
    file asks again."""

    @cached_property
    def parsed(self) -> ast.Module | Unreadable:
        return parse(self.data, self.path)

    @property
    def tree(self) -> ast.Module | None:
        return self.parsed if isinstance(self.parsed, ast.Module) else None

    @property
    def unreadable(self) -> Unreadable | None:
        """Why the grader cannot read the file, if it cannot."""
        return self.parsed if isinstance(self.parsed, Unreadable) else None

    @cached_property
    def identifiers(self) -> frozenset[str]:
        """The names the file spells out: its identifiers, and the dotted names its string
        literals hold (`register_buffer("mask", ...)`), up to where it stops tokenizing."""
        found: set[str] = set()
        with contextlib.suppress(SyntaxError, ValueError, tokenize.TokenError):
            for token in tokenize.tokenize(io.BytesIO(self.data).readline):
                if token.type == tokenize.NAME:
                    found.add(token.string)
                elif token.type == tokenize.STRING and (
                    named := NAME_LITERAL.fullmatch(token.string)
                ):
                    found.update(part for part in named[2].split(".") if part.isidentifier())
        return frozenset(found)

    @cached_property
    def literals(self) -> list[str | list[str | None]]:
        """The file's strings, each a message it may raise: a constant's text, an f-string's
        parts (None where a value is formatted in)."""
        found: list[str | list[str | None]] = []
        for node in self.nodes:
            if isinstance(node, ast.JoinedStr):
                found.append(
                    [str(v.value) if isinstance(v, ast.Constant) else None for v in node.values]
                )
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and not isinstance(self.parents.get(id(node)), ast.JoinedStr)
            ):
                found.append(node.value)
        return found

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node of the tree, walked once for every reader (none when it does not parse)."""
        return [] if self.tree is None else list(ast.walk(self.tree))

    @cached_property
    def parents(self) -> dict[int, ast.AST]:
        """Each node's parent, by the child's id."""
        return {id(child): node for node in self.nodes for child in ast.iter_child_nodes(node)}

    @cached_property
    def imports(self) -> set[str]:
        """Every module name the file imports."""
        is_package = self.path.endswith("__init__.py")
        return imported_names(self.nodes, self.module, is_package, self.bindings)

    @cached_property
    def bindings(self) -> dict[str, str]:
        """Names bound by imports."""
        return import_bindings(self.nodes)

    @cached_property
    def defined(self) -> set[str]:
        """Names the candidate defines: functions, classes, assigned names and attributes."""
        names: set[str] = set()
        for node in self.nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
        return names


class Sources:
    """A submission's Python files by relative path, and the scope of each entry file; each
    file is parsed once, however many checks read it."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = {
            path: SourceFile(path, module_name(path), data) for path, data in files.items()
        }
        self.by_module = {f.module: f for f in self.files.values()}

    def own(self, module: str) -> SourceFile | None:
        """The candidate's file Python imports for a module name, unless the name is shadowed."""
        if module.split(".")[0] in SHADOWED:
            return None
        return self.by_module.get(module)

    def scope(self, entry: str) -> list[SourceFile]:
        """The entry file and the candidate's files it imports, transitively: a file named after
        a standard or installed module too, which Python runs where the image lacks that module
        (the host cannot tell)."""
        start = self.files.get(entry)
        if start is None:
            return []
        seen = {start.path: start}
        queue = [start]
        while queue:
            current = queue.pop()
            for name in sorted(current.imports):
                found = self.by_module.get(name)
                if found is not None and found.path not in seen:
                    seen[found.path] = found
                    queue.append(found)
        return sorted(seen.values(), key=lambda f: (f.path != entry, f.path))
