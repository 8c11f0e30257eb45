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


MAX_LINKS = 32
"""Attributes a path is resolved through: torch's deepest public names have 5. A longer chain
on an imported name is resolved as far as that, and no further."""


def resolve(node: ast.AST, bindings: dict[str, str]) -> str | None:
    """The dotted path an expression names, when its root is an imported name or a module
    imported by a literal name (`import_module("x")`, `__import__("x")`); attributes read by
    `getattr` with a literal name count as read. Read without recursion, however long; None
    past `MAX_LINKS` links."""
    paths, _ = chain_paths(node, bindings)
    return paths[id(node)] if paths else root_path(node, bindings)


def chain_paths(node: ast.AST, bindings: dict[str, str]) -> tuple[dict[int, str | None], bool]:
    """The path of each link of the chain of attributes that ends at `node` (as `resolve`
    gives it, by the link's id), each link walked once; and whether its root is an imported
    name with more than `MAX_LINKS` links on it."""
    links: list[tuple[ast.AST, str]] = []
    while True:
        if isinstance(node, ast.Attribute):
            links.append((node, node.attr))
            node = node.value
        elif isinstance(node, ast.Call) and is_call_to(node, "getattr") and literal_at(node, 1):
            links.append((node, literal_at(node, 1)))
            node = node.args[0]
        else:
            break
    root = root_path(node, bindings)
    paths: dict[int, str | None] = {}
    path = root
    for depth, (link, attribute) in enumerate(reversed(links), 1):
        path = None if path is None or depth > MAX_LINKS else f"{path}.{attribute}"
        paths[id(link)] = path
    return paths, root is not None and len(links) > MAX_LINKS


def dotted(expr: ast.expr) -> str:
    """`a.b.c` for a chain of attributes on a name, read without recursion; "" for any other
    expression (which names no definition)."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    return ".".join([expr.id, *reversed(parts)]) if isinstance(expr, ast.Name) else ""


def literal_at(node: ast.Call, index: int, keyword: str = "") -> str:
    """The string literal passed as argument `index` (or by `keyword`), or ""."""
    if len(node.args) > index:
        arg: ast.expr | None = node.args[index]
    else:
        arg = next((k.value for k in node.keywords if keyword and k.arg == keyword), None)
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""


def root_path(node: ast.AST, bindings: dict[str, str]) -> str | None:
    if isinstance(node, ast.Name):
        return bindings.get(node.id)
    name = literal_at(node, 0, "name") if isinstance(node, ast.Call) else ""
    if not isinstance(node, ast.Call) or not name:
        return None
    if is_call_to(node, "import_module"):
        return name
    if is_call_to(node, "__import__"):  # the top package, unless a fromlist is given
        fromlist = len(node.args) > 3 or any(k.arg == "fromlist" for k in node.keywords)
        return name if fromlist else name.split(".")[0]
    return None


def is_call_to(node: ast.Call, name: str) -> bool:
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (
        isinstance(func, ast.Attribute) and func.attr == name
    )


def called_name(node: ast.Call) -> str:
    """The name a call is written with: `f` of `f(x)` and of `m.f(x)`."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def called(node: ast.Call, bindings: dict[str, str]) -> str:
    """The name a call calls, through imports (`from importlib import import_module as load`)."""
    path = resolve(node.func, bindings)
    return called_name(node) if path is None else path.rpartition(".")[2]
