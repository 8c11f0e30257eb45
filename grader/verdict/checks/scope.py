"""Which of a submission's files a problem reaches: its entry file and the candidate's own
modules it imports, transitively, however imported."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from functools import cached_property

from grader.verdict.checks.bindings import import_bindings

# Names the submission can never shadow: its folder comes last on the import path.
SHADOWED = set(sys.stdlib_module_names) | {"torch", "numpy", "safetensors"}
IMPORTERS = {"import_module", "__import__"}


def module_name(path: str) -> str:
    """`pkg/mod.py` -> `pkg.mod`; `pkg/__init__.py` -> `pkg`."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def parse(text: str, name: str) -> ast.Module | None:
    try:
        return ast.parse(text, filename=name)
    except (SyntaxError, ValueError):
        return None


def with_parents(dotted: str) -> list[str]:
    """`a.b.c` -> `a`, `a.b`, `a.b.c`: importing a module imports its packages."""
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def imported_names(nodes: list[ast.AST], module: str, is_package: bool) -> set[str]:
    """Every module name a file imports (`nodes` are all of its nodes): statements at any
    depth, and `importlib.import_module("x")` / `__import__("x")` with a literal name."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.update(with_parents(alias.name))
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            if node.level > len(package) + 1:
                continue
            target = ".".join([*base, *([node.module] if node.module else [])])
            if target:
                found.update(with_parents(target))
            found.update(f"{target}.{a.name}".lstrip(".") for a in node.names if a.name != "*")
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if (
                called in IMPORTERS
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
            ):
                found.update(with_parents(first.value))
    return found


@dataclass(frozen=True)
class SourceFile:
    path: str
    module: str
    text: str

    @cached_property
    def tree(self) -> ast.Module | None:
        return parse(self.text, self.path)

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
        return imported_names(self.nodes, self.module, self.path.endswith("__init__.py"))

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

    def __init__(self, texts: dict[str, str]) -> None:
        self.files = {
            path: SourceFile(path, module_name(path), text) for path, text in texts.items()
        }
        self.by_module = {f.module: f for f in self.files.values()}

    def own(self, module: str) -> SourceFile | None:
        """The candidate's file for an imported module name, unless the name is shadowed."""
        if module.split(".")[0] in SHADOWED:
            return None
        return self.by_module.get(module)

    def scope(self, entry: str) -> list[SourceFile]:
        """The entry file and the candidate's files it imports, transitively."""
        start = self.files.get(entry)
        if start is None:
            return []
        seen = {start.path: start}
        queue = [start]
        while queue:
            current = queue.pop()
            for name in sorted(current.imports):
                found = self.own(name)
                if found is not None and found.path not in seen:
                    seen[found.path] = found
                    queue.append(found)
        return sorted(seen.values(), key=lambda f: (f.path != entry, f.path))
