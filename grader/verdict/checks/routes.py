"""Routes to forbidden APIs read from source: uses statically resolved to a forbidden object,
and constructs that can only serve to hide such a route from the host and the run-time trace.

Honest reflection (`getattr(self, name)`, `hasattr(mha, name)`, `vars(self)`) and strings that
merely name an API (an error message) are neither.
"""

from __future__ import annotations

import ast
import codecs
import importlib
import inspect
import re
from dataclasses import dataclass
from functools import cache

from grader.verdict.checks.bindings import resolve
from grader.verdict.checks.scope import IMPORTERS, SourceFile

COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
# Attributes that reach frames, closures or code objects: the trace's originals live there.
INTROSPECTION = {
    "__closure__",
    "cell_contents",
    "__code__",
    "__globals__",
    "__builtins__",
    "__wrapped__",
    "f_back",
    "f_globals",
    "f_locals",
    "f_builtins",
    "gi_frame",
    "cr_frame",
    "ag_frame",
    "tb_frame",
    "_getframe",
}
# Resolved dotted prefixes that bypass or undo the trace.
TAMPERING = {
    "torch._C": "the private torch._C binding",
    "torch.ops": "torch.ops, the operator registry",
    "ctypes": "ctypes",
    "gc": "the garbage collector's object graph",
    "builtins": "the builtins module",
    "sys.modules": "the module table sys.modules",
    "sys._getframe": "frame introspection",
    "sys.settrace": "a trace hook",
    "sys.setprofile": "a profile hook",
    "importlib.reload": "re-importing a module",
    "inspect.currentframe": "frame introspection",
    "inspect.stack": "frame introspection",
    "inspect.trace": "frame introspection",
    "inspect.getouterframes": "frame introspection",
    "inspect.getclosurevars": "closure introspection",
    "inspect.unwrap": "unwrapping a function",
    "__main__": "the grader's worker module",
}
CODE_FROM_STRINGS = {"eval", "exec", "compile", "__builtins__"}
NAME_ARGUMENT = {"getattr", "attrgetter", "methodcaller", "vars", *IMPORTERS}
NAMESPACES = {"globals", "locals", "vars"}


@dataclass(frozen=True, order=True)
class Route:
    line: int
    what: str
    tampering: bool = False


def cookie_route(text: str) -> Route | None:
    """A source-encoding declaration other than UTF-8: Python would run other text than the
    host reads."""
    for number, line in enumerate(text.splitlines()[:2], start=1):
        match = COOKIE.match(line)
        if match is None:
            continue
        try:
            name = codecs.lookup(match.group(1)).name
        except LookupError:
            name = match.group(1)
        if name != "utf-8":
            return Route(number, f"a '# coding: {match.group(1)}' declaration", True)
    return None


def called_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def tampering_of(path: str) -> str | None:
    parts = path.split(".")
    if "_C" in parts:
        return TAMPERING["torch._C"]
    for prefix, what in TAMPERING.items():
        if path == prefix or path.startswith(prefix + "."):
            return what
    return None


@cache
def is_torch_module(path: str) -> bool:
    """`torch.nn.functional` is a module; `torch.nn.Linear` and `torch.float32` are not."""
    parts = path.split(".")
    if parts[0] != "torch":
        return False
    try:
        obj = importlib.import_module("torch")
        for part in parts[1:]:
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return False
    return inspect.ismodule(obj)


class RouteFinder:
    """Walks one file and collects its routes to `forbidden` names."""

    def __init__(self, file: SourceFile, forbidden: set[str], defined: set[str]) -> None:
        self.file = file
        self.forbidden = forbidden
        self.bindings = file.bindings
        # A forbidden name the candidate defines (a helper method called
        # `scaled_dot_product_attention`) is their own unless it resolves to torch's.
        self.own = defined & forbidden
        self.star = any(
            isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
            for n in file.nodes
        )
        self.routes: set[Route] = set()

    def add(self, node: ast.AST, what: str, tampering: bool = False) -> None:
        self.routes.add(Route(getattr(node, "lineno", 0), what, tampering))

    def names_forbidden(self, text: str) -> bool:
        return any(name in text for name in self.forbidden)

    def run(self) -> list[Route]:
        for node in self.file.nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                self.visit_import(node)
            elif isinstance(node, ast.Attribute):
                self.visit_attribute(node)
            elif isinstance(node, ast.Name):
                self.visit_name(node)
            elif isinstance(node, ast.Call):
                self.visit_call(node)
            elif isinstance(node, ast.Subscript):
                self.visit_subscript(node)
        return sorted(self.routes)

    def module_as_value(self, node: ast.Name | ast.Attribute, path: str) -> None:
        """A torch module handed around as a value (`[F][0]`, `f(torch)`) escapes the reading
        of its attributes; reading them or aliasing it by name does not."""
        if not is_torch_module(path):
            return
        parent = self.file.parents.get(id(node))
        if isinstance(parent, ast.Attribute):
            return  # reading an attribute: resolved and judged itself
        if isinstance(parent, ast.Assign) and isinstance(parent.targets[0], ast.Name):
            return  # an alias by name: followed by import_bindings
        if isinstance(parent, ast.Call) and (
            node is parent.func
            or (called_name(parent) in {"hasattr", "getattr"} and node in parent.args[:1])
        ):
            return
        self.add(node, f"the module {path} passed around as a value", True)

    def visit_import(self, node: ast.Import | ast.ImportFrom) -> None:
        base = node.module or "" if isinstance(node, ast.ImportFrom) else ""
        for alias in node.names:
            path = f"{base}.{alias.name}".lstrip(".")
            what = tampering_of(path)
            if what is not None:
                self.add(node, f"import of {what}", True)
            elif alias.name.split(".")[-1] in self.forbidden:
                self.add(node, f"import of {path}")

    def visit_attribute(self, node: ast.Attribute) -> None:
        if node.attr in INTROSPECTION:
            self.add(node, f"{node.attr} (frame or closure introspection)", True)
            return
        if node.attr == "_C":
            self.add(node, TAMPERING["torch._C"], True)
            return
        path = resolve(node, self.bindings)
        if path is not None:
            what = tampering_of(path)
            if what is not None:
                self.add(node, what, True)
            elif node.attr == "__dict__" and path.split(".")[0] == "torch":
                self.add(node, f"{path} (a torch module's namespace)", True)
            elif node.attr in self.forbidden:
                self.add(node, path)
            else:
                self.module_as_value(node, path)
        elif node.attr in self.forbidden and node.attr not in self.own:
            self.add(node, node.attr)

    def visit_name(self, node: ast.Name) -> None:
        if node.id in CODE_FROM_STRINGS:
            self.add(node, f"{node.id} (code built from strings)", True)
            return
        path = self.bindings.get(node.id)
        if path is not None and node.id != path.split(".")[0]:
            what = tampering_of(path)
            if what is not None:
                self.add(node, what, True)
                return
        if path is not None:
            self.module_as_value(node, path)
        imported = path is not None and path.split(".")[-1] in self.forbidden
        starred = self.star and node.id in self.forbidden and node.id not in self.own
        if imported or starred:
            self.add(node, path or node.id)

    def visit_call(self, node: ast.Call) -> None:
        name = called_name(node)
        if name in NAMESPACES and not node.args:
            self.add(node, f"{name}() (reads a namespace wholesale)", True)
        if name not in NAME_ARGUMENT or not node.args:
            return
        target = resolve(node.args[0], self.bindings)
        on_torch = target is not None and target.split(".")[0] == "torch"
        literal = [
            a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        for text in literal:
            if name in IMPORTERS:
                path = text
            elif target is not None:
                path = f"{target}.{text}"
            else:  # an attribute of an object of the candidate's: only `_C` gives it away
                path = "torch._C" if "_C" in text.split(".") else ""
            what = tampering_of(path) if path else None
            if what is not None:
                self.add(node, f"{name}(..., {text!r}) reaches {what}", True)
            elif self.names_forbidden(text) and (target is not None or text not in self.own):
                self.add(node, f"{name}(..., {text!r})")
        if name == "vars" and on_torch:
            self.add(node, f"vars({target}) (a torch module's namespace)", True)
        elif not literal and (
            name in IMPORTERS | {"attrgetter", "methodcaller"} or (name == "getattr" and on_torch)
        ):
            self.add(node, f"{name} with a computed name", True)

    def visit_subscript(self, node: ast.Subscript) -> None:
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            if "_C" in key.value.split("."):
                self.add(node, f"[{key.value!r}] reaches {TAMPERING['torch._C']}", True)
            elif self.names_forbidden(key.value):
                self.add(node, f"[{key.value!r}]")


def find_routes(file: SourceFile, forbidden: set[str], defined: set[str]) -> list[Route]:
    """Every route to a forbidden name in one file, and every construct that hides one."""
    if file.tree is None:
        return []
    routes = RouteFinder(file, forbidden, defined).run()
    cookie = cookie_route(file.text)
    return sorted([*routes, cookie]) if cookie else routes
