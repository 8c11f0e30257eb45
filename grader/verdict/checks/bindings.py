"""What the names of a file are bound to by its imports, read from source (`F` is
`torch.nn.functional`)."""

from __future__ import annotations

import ast


def import_bindings(nodes: list[ast.AST]) -> dict[str, str]:
    """Local names bound to imported modules or objects, as dotted paths (`F` ->
    `torch.nn.functional`), followed through plain assignments (`f = F`); `nodes` are every
    node of a file."""
    bindings: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bindings[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bindings[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    bindings[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    assigns = [n for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1]
    for _ in range(3):  # aliases of aliases
        for node in assigns:
            target = node.targets[0]
            path = resolve(node.value, bindings)
            if isinstance(target, ast.Name) and path is not None:
                bindings.setdefault(target.id, path)
    return bindings


def resolve(node: ast.AST, bindings: dict[str, str]) -> str | None:
    """The dotted path an expression names, when its root is an imported name."""
    if isinstance(node, ast.Name):
        return bindings.get(node.id)
    if isinstance(node, ast.Attribute):
        base = resolve(node.value, bindings)
        return None if base is None else f"{base}.{node.attr}"
    if isinstance(node, ast.Call) and is_call_to(node, "import_module") and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def is_call_to(node: ast.Call, name: str) -> bool:
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (
        isinstance(func, ast.Attribute) and func.attr == name
    )
