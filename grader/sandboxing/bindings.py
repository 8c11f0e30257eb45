"""What a module's source binds at its top level: read by the staging of notebooks (which
part defines a problem) and by the feedback on a missing name."""

from __future__ import annotations

import ast
from collections.abc import Iterator


def top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's statements, and those of its top-level `if`, `try`, `with` and loops."""
    stack = list(reversed(body))
    while stack:
        statement = stack.pop()
        yield statement
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        inner = [getattr(statement, f, []) for f in ("body", "orelse", "finalbody")]
        inner += [handler.body for handler in getattr(statement, "handlers", [])]
        stack.extend(reversed([s for block in inner for s in block]))


def bound(tree: ast.Module) -> tuple[set[str], list[str]] | None:
    """The names the module binds at its top level, and those of its classes and functions in
    order; None if a star import may bind any name."""
    names: set[str] = set()
    defined: list[str] = []
    for node in top_level(tree.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            defined.append(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if any(alias.name == "*" for alias in node.names):
                return None
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names, defined
