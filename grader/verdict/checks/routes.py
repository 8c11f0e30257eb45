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
import io
import re
import sys
import tokenize
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from typing import cast

import torch

from grader.verdict.checks.bindings import (
    MAX_LINKS,
    called,
    called_name,
    chain_paths,
    dotted,
    root_path,
)
from grader.verdict.checks.scope import IMPORTERS, SHADOWED, SourceFile

COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
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
FRAME_CODE = {"f_code", "gi_code", "cr_code", "f_trace"}
# Names that reach the import machinery or hook torch's functions, however they are written:
# an attribute, a name, a definition, a keyword, a string.
HOOKS = {
    "__loader__": "the module's loader (import machinery)",
    "__spec__": "the module's spec (import machinery)",
    "__torch_function__": "a __torch_function__ override, which intercepts torch's functions",
    "__torch_dispatch__": "a __torch_dispatch__ override, which intercepts torch's operators",
    "__getattribute__": "__getattribute__, which reads attributes by names built at run time",
}
# The dunder attributes honest code reads: those of the values attention code handles and what
# describes a module or a class. Any other (`__self__`, `__subclasses__`, `__mro__`, `__func__`)
# reaches objects the code was never handed, the run-time guard's among them.
PLAIN_KINDS = (object, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, slice)
DESCRIPTIONS = {"__name__", "__qualname__", "__module__", "__doc__", "__dict__", "__file__"}
DESCRIPTIONS |= {
    "__version__",
    "__all__",
    "__annotations__",
    "__slots__",
    "__post_init__",
    "__main__",
}
REACHING = {"__getattribute__", "__reduce__", "__reduce_ex__", "__init_subclass__"}
REACHING |= {"__subclasshook__", "__traceback__"}
PLAIN_DUNDERS = (
    frozenset(
        name
        for kind in (*PLAIN_KINDS, range, Exception, torch.Tensor, torch.nn.Module)
        for name in dir(kind)
        if name.startswith("__") and name.endswith("__")
    )
    | DESCRIPTIONS
) - REACHING
DUNDER = re.compile(r"(?<![A-Za-z0-9_])__[A-Za-z0-9_]+?__(?![A-Za-z0-9_])")
"""A dunder name inside a string: `"{0.__init__.__globals__}".format(x)` reads attributes too."""
INTERNALS = "an attribute of the interpreter's, which reaches objects the code was not handed"
IMPORT_MACHINERY = "the import machinery, which loads code by path or from text"
STARTS_PROGRAMS = "another program started, which may run any code"
# Resolved dotted names (matched as whole components, wherever they sit in a path: `os.sys.path`)
# that bypass or undo the trace, or load code the host never reads.
TAMPERING = {
    "torch._C": "the private torch._C binding",
    "torch.ops": "torch.ops, the operator registry",
    "torch.library": "torch.library, which registers operator kernels",
    "torch.overrides": "torch.overrides, which intercepts torch's functions",
    "torch.utils._python_dispatch": "torch's dispatch modes, which intercept its operators",
    "torch.utils.cpp_extension": "native code compiled at run time",
    "torch.hub": "torch.hub, which loads code by path",
    "torch.package": "torch.package, which loads code from an archive",
    "torch.jit.load": "a compiled program loaded from a file or bytes",
    "torch.jit.CompilationUnit": "a compiled program built from text",
    "ctypes": "ctypes",
    "gc": "the garbage collector's object graph",
    "builtins": "the builtins module",
    "sys.modules": "the module table sys.modules",
    "sys.meta_path": IMPORT_MACHINERY,
    "sys.path_hooks": IMPORT_MACHINERY,
    "sys.path_importer_cache": IMPORT_MACHINERY,
    "sys.addaudithook": "an audit hook",
    "sys.audit": "an audit event",
    "sys._getframe": "frame introspection",
    "sys.settrace": "a trace hook",
    "sys.setprofile": "a profile hook",
    "sys.gettrace": "a trace hook",
    "sys.getprofile": "a profile hook",
    "threading.settrace": "a trace hook",
    "threading.setprofile": "a profile hook",
    "importlib.reload": "re-importing a module",
    "importlib.util": IMPORT_MACHINERY,
    "importlib.machinery": IMPORT_MACHINERY,
    "importlib.abc": IMPORT_MACHINERY,
    "importlib._bootstrap": IMPORT_MACHINERY,
    "importlib._bootstrap_external": IMPORT_MACHINERY,
    "runpy": "runpy, which runs code by path",
    "pkgutil": "pkgutil, which imports by names and paths built at run time",
    "zipimport": "zipimport, which loads code from an archive",
    "imp": IMPORT_MACHINERY,
    "marshal": "code objects built from bytes (marshal)",
    "pickle": "a pickle, which can call anything",
    "_pickle": "a pickle, which can call anything",
    "types.CodeType": "code objects built from bytes",
    "types.FunctionType": "a function built from a code object",
    "subprocess": STARTS_PROGRAMS,
    "pty": STARTS_PROGRAMS,
    "inspect.currentframe": "frame introspection",
    "inspect.stack": "frame introspection",
    "inspect.trace": "frame introspection",
    "inspect.getouterframes": "frame introspection",
    "inspect.getclosurevars": "closure introspection",
    "inspect.unwrap": "unwrapping a function",
    "inspect.getmodule": "the module of an object it was handed",
    "__main__": "the grader's worker module",
    # resolvers that reach any object, or run any text, from a string the host does not read
    "pydoc": "pydoc, which finds any object by a name built at run time",
    "string.Formatter": "string.Formatter, which reads any attribute named in a string",
    "logging.config": "logging.config, which imports and calls by names in its settings",
    "doctest": "doctest, which runs the code in a string",
    "timeit": "timeit, which runs the code in a string",
    "code": "the code module, which runs the code in a string",
    "codeop": "codeop, which compiles the code in a string",
    "torch.load": "torch.load, which unpickles (and can import and call anything)",
    "torch.serialization": "torch.serialization, which unpickles",
    "torch.fx": "torch.fx, which generates code and imports by name",
    "copyreg": "copyreg, the pickle's registry",
    "shelve": "a pickle, which can call anything",
    "sympy": "sympy, which evaluates expressions given as text",
    "linecache": "linecache, which hands out any text as a file's source (to TorchScript)",
}
SAFE_LOAD_KEYWORDS = {"weights_only", "map_location", "mmap"}
"""What `torch.load(..., weights_only=True)` may be given and stay a load of tensors only: no
`pickle_module`, no arguments built at run time (`**kwargs`: `None` is no keyword)."""
WEIGHTS_ONLY_SAFE = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 6)
"""Before torch 2.6 (its default turned to `weights_only=True`), a crafted file got past that
unpickler (CVE-2025-32434): there, every `torch.load` is tampering."""
OS_PROGRAMS = re.compile(r"(?:^|\.)os\.(?:system|popen|exec\w*|spawn\w*|posix_spawnp?)(?:\.|$)")
CODE_FROM_STRINGS = {"eval", "exec", "compile", "__builtins__"}
NAME_ARGUMENT = {"getattr", "setattr", "delattr", "attrgetter", "methodcaller", "vars", *IMPORTERS}
NAMESPACES = {"globals", "locals", "vars"}
# Where a call's one name argument is (the rest take every argument: `attrgetter(*names)`).
NAME_AT = {
    "getattr": 1,
    "setattr": 1,
    "delattr": 1,
    "methodcaller": 0,
    "import_module": 0,
    "__import__": 0,
}
# Calls whose computed name is tampering on any object; the rest, on an imported one.
COMPUTED_ANYWHERE = {"attrgetter", "methodcaller", *IMPORTERS}
# Calls reading or writing an attribute by a name built at run time on any object: the name
# must be one the source shows cannot be private (`f"head_{i}"`, a loop over literals).
BY_NAME = {"getattr", "setattr", "delattr"}
# Builtins that read or write by names built at run time: called directly, or not at all.
REFLECTION = {"getattr", "setattr", "delattr", "vars", "globals", "locals", "__import__"}
# Modules whose attributes hold routes: handed around as a value, they escape that reading.
GUARDED_MODULES = {"sys", "os", "importlib", "inspect", "types", "operator"}


@dataclass(frozen=True, order=True)
class Route:
    line: int
    what: str
    tampering: bool = False


def cookie_route(data: bytes) -> Route | None:
    """A source-encoding declaration other than UTF-8, found as Python finds it: Python would run
    other text than the text a reader sees."""
    try:
        encoding, lines = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # the file does not parse either: unreadable
        return None
    match = COOKIE.match(lines[-1]) if lines else None
    if match is None or codecs.lookup(encoding).name in {"utf-8", "utf-8-sig", "ascii"}:
        return None
    declared = match.group(1).decode("ascii", "replace")
    return Route(len(lines), f"a '# coding: {declared}' declaration", True)


@lru_cache(maxsize=65536)
def tampering_of(path: str) -> str | None:
    """What a resolved dotted path reaches, if it can only serve to hide a route (kept for the
    run: the same paths come back in every file)."""
    parts = path.split(".")
    if "_C" in parts:
        return TAMPERING["torch._C"]
    for prefix, what in TAMPERING.items():
        if holds(parts, prefix.split(".")):
            return what
    if OS_PROGRAMS.search(path):
        return STARTS_PROGRAMS
    private = private_torch_name(parts)
    return None if private is None else f"the private name {private}"


def is_internal(name: str) -> bool:
    """A dunder name outside `PLAIN_DUNDERS` (and the `HOOKS`, which say more of themselves)."""
    dunder = name.startswith("__") and name.endswith("__") and len(name) > 4
    return dunder and name not in PLAIN_DUNDERS and name not in HOOKS


def shared(path: str) -> bool:
    """A path in a library's module (the standard library's, torch's), not the candidate's."""
    return path.split(".")[0] in SHADOWED


def holds(parts: list[str], wanted: list[str]) -> bool:
    """`wanted` is a run of whole components of `parts`."""
    size = len(wanted)
    starts = [i for i, part in enumerate(parts) if part == wanted[0]]
    return any(parts[i : i + size] == wanted for i in starts)


PUBLIC_PRIVATE = {"torch._assert", "torch.nn.init._calculate_fan_in_and_fan_out"}
"""Private torch names public code uses as public ones (torchvision, timm): no attention in them."""


def private_torch_name(parts: list[str]) -> str | None:
    """`torch._foo` of `torch._foo.bar`: a path under torch up to its first private component
    (a dunder such as `torch.__version__` is not one)."""
    if parts[0] != "torch":
        return None
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            name = ".".join(parts[: i + 1])
            return None if name in PUBLIC_PRIVATE else name
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
    except Exception:  # the path is the candidate's: whatever reading it raises, not a module
        return False
    return inspect.ismodule(obj)


NAMED = (  # the nodes that bind their `name`
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def is_library(path: str) -> bool:
    """`json` or `os.path`: a module of the standard library, which the grader's code uses too
    (its attributes are read on the host only when its package is already imported)."""
    parts = path.split(".")
    if parts[0] not in sys.stdlib_module_names:
        return False
    parent = sys.modules.get(".".join(parts[:-1])) if len(parts) > 1 else None
    return len(parts) == 1 or parent is None or inspect.ismodule(getattr(parent, parts[-1], None))


class RouteFinder:
    """Walks one file and collects its routes to `forbidden` names."""

    def __init__(self, file: SourceFile, forbidden: set[str], defined: set[str]) -> None:
        self.file = file
        self.forbidden = forbidden
        self.bindings = file.bindings
        # A forbidden name the candidate defines (a helper method called
        # `scaled_dot_product_attention`) is their own unless it resolves to torch's.
        self.own = defined & forbidden
        if "star" not in file.memo:
            file.memo["star"] = any(
                isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
                for n in file.nodes
            )
        self.star = bool(file.memo["star"])
        self.routes: set[Route] = set()
        self.paths: dict[int, str | None] = {}  # of the links of the chains met, by id

    def add(self, node: ast.AST, what: str, tampering: bool = False) -> None:
        self.routes.add(Route(getattr(node, "lineno", 0), what, tampering))

    def path(self, node: ast.AST) -> str | None:
        """`resolve(node)`, each chain of attributes walked once: the paths of its links are
        kept, and the outer link is met first (the nodes are walked breadth first). A chain
        too long to resolve on an imported name is tampering."""
        if id(node) not in self.paths:
            paths, deep = chain_paths(node, self.bindings)
            if not paths:
                return root_path(node, self.bindings)
            self.paths.update(paths)
            if deep:
                self.add(node, f"a chain of over {MAX_LINKS} attributes on an imported name", True)
        return self.paths[id(node)]

    def names_forbidden(self, text: str) -> bool:
        return any(name in text for name in self.forbidden)

    def run(self) -> list[Route]:
        for node in reached_nodes(self.file):
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
        self.routes.update(hook_routes(self.file))
        return sorted(self.routes)

    def visit_hook(self, node: ast.AST) -> None:
        """A name of `HOOKS` however written: defined, read, passed by keyword or as a string
        (whatever the question: `hook_routes` finds them once per file)."""
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = node.name
        elif isinstance(node, ast.keyword):
            name = node.arg or ""
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value
        elif isinstance(node, ast.Attribute):
            name = node.attr
        else:
            name = node.id if isinstance(node, ast.Name) else ""
        if name in HOOKS:
            self.add(node, HOOKS[name], True)
        elif isinstance(node, ast.Constant) and not isinstance(
            self.file.parents.get(id(node)),
            ast.Expr,  # a docstring runs nothing
        ):
            internal = [d for d in DUNDER.findall(name) if is_internal(d)]
            if internal:
                self.add(node, f"{internal[0]!r} in a string ({INTERNALS})", True)

    def module_as_value(self, node: ast.Name | ast.Attribute, path: str) -> None:
        """A torch module, or one of `GUARDED_MODULES`, handed around as a value (`[F][0]`,
        `f(torch)`) escapes the reading of its attributes; reading them or aliasing it by name
        does not."""
        if not is_torch_module(path) and path not in GUARDED_MODULES and not is_library(path):
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
            if alias.name == "*" and base in GUARDED_MODULES:
                self.add(node, f"a star import from {base}, whose names hold routes", True)
            elif what is not None:
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
        if is_internal(node.attr):
            self.add(node, f"{node.attr} ({INTERNALS})", True)
            return
        path = self.path(node)
        if path is not None and not isinstance(node.ctx, ast.Load) and shared(path):
            self.add(node, f"{path} changed (a module others use too, the grader's own)", True)
        elif path is not None:
            what = tampering_of(path)
            if what is not None and not self.loads_weights_only(node, path):
                self.add(node, what, True)
            elif node.attr == "__dict__":
                self.add(node, f"{path} (an imported namespace)", True)
            elif node.attr in self.forbidden:
                self.add(node, path)
            else:
                self.module_as_value(node, path)
        elif node.attr in self.forbidden and node.attr not in self.own:
            self.add(node, node.attr)

    def loads_weights_only(self, node: ast.Attribute, path: str) -> bool:
        """`torch.load(f, weights_only=True)` (torch's default since 2.6), called at once: its
        unpickler builds tensors and plain containers only, whatever the file holds (its list of
        allowed classes grows through `torch.serialization` alone, itself tampering). Any other
        use of `torch.load` (unpickling, an alias, arguments built at run time) still is."""
        call = self.file.parents.get(id(node))
        if path != "torch.load" or not isinstance(call, ast.Call) or call.func is not node:
            return False
        if not WEIGHTS_ONLY_SAFE:
            return False
        given = {k.arg: k.value for k in call.keywords}
        weights_only = given.get("weights_only")
        return (
            isinstance(weights_only, ast.Constant)
            and weights_only.value is True
            and set(given) <= SAFE_LOAD_KEYWORDS
            and len(call.args) <= 2  # the file, and where to map it
            and not any(isinstance(a, ast.Starred) for a in call.args)
        )

    def visit_name(self, node: ast.Name) -> None:
        if node.id in CODE_FROM_STRINGS:
            self.add(node, f"{node.id} (code built from strings)", True)
            return
        parent = self.file.parents.get(id(node))
        if node.id in REFLECTION and not (isinstance(parent, ast.Call) and node is parent.func):
            self.add(node, f"{node.id} handed around as a value", True)
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
        name = called(node, self.bindings)
        if name in NAMESPACES and not node.args:
            self.add(node, f"{name}() (reads a namespace wholesale)", True)
        if name not in NAME_ARGUMENT:
            return
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            self.add(node, f"{name} with arguments built at run time", True)
            return
        arguments = name_arguments(name, node)
        if not arguments:
            return
        target = self.path(node.args[0]) if node.args else None
        literal = [
            a.value for a in arguments if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        for text in literal:
            if name in IMPORTERS:
                path = text
            elif target is not None:
                path = f"{target}.{text}"
            else:  # an attribute of an object of the candidate's: only `_C` gives it away
                path = "torch._C" if "_C" in text.split(".") else ""
            what = tampering_of(path) if path else None
            if text in INTROSPECTION or text in FRAME_CODE:
                self.add(node, f"{name}(..., {text!r}) (frame or closure introspection)", True)
            elif name in {"setattr", "delattr"} and target is not None and shared(target):
                self.add(node, f"{name}({target}, {text!r}) (a module others use too)", True)
            elif what is not None:
                self.add(node, f"{name}(..., {text!r}) reaches {what}", True)
            elif self.names_forbidden(text) and (target is not None or text not in self.own):
                self.add(node, f"{name}(..., {text!r})")
        if name == "vars" and target is not None:
            self.add(node, f"vars({target}) (an imported namespace)", True)
        elif not literal and (name in COMPUTED_ANYWHERE or target is not None):
            self.add(node, f"{name} with a computed name", True)
        elif name in BY_NAME and any(self.may_be_private(a) for a in arguments):
            self.add(node, f"{name} with a name built at run time that may be private", True)

    def may_be_private(self, name: ast.expr) -> bool:
        """Whether a name built at run time may start with an underscore: unless it is a
        literal, an f-string or a sum that starts with text that does not, or the variable of
        a loop over such literals."""
        while isinstance(name, ast.BinOp) and isinstance(name.op, ast.Add):
            name = name.left
        if isinstance(name, ast.JoinedStr) and name.values:
            name = name.values[0]
        if isinstance(name, ast.Constant):
            return not (isinstance(name.value, str) and name.value[:1].isalpha())
        if isinstance(name, ast.Name):
            values = loop_literals(name, self.file.parents)
            if values is None or self.bound_names[name.id] != 1:  # rebound somewhere
                return True
            return any(not v[:1].isalpha() for v in values)
        return True

    @cached_property
    def bound_names(self) -> Counter[str]:
        """How many times the file binds each name: assigned, a loop's or a `with`'s target, a
        parameter, an exception's name, an import, a definition."""
        bound: Counter[str] = Counter()
        for node in self.file.nodes:
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bound[node.id] += 1
            elif isinstance(node, ast.arg):
                bound[node.arg] += 1
            elif isinstance(node, NAMED) and node.name:
                bound[node.name] += 1
            elif isinstance(node, ast.alias):
                bound[(node.asname or node.name).split(".")[0]] += 1
            elif isinstance(node, ast.Global | ast.Nonlocal):
                bound.update(node.names)
        return bound

    def visit_subscript(self, node: ast.Subscript) -> None:
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            if "_C" in key.value.split("."):
                self.add(node, f"[{key.value!r}] reaches {TAMPERING['torch._C']}", True)
            elif is_internal(key.value):
                self.add(node, f"[{key.value!r}] ({INTERNALS})", True)
            elif self.names_forbidden(key.value):
                self.add(node, f"[{key.value!r}]")
        elif is_namespace(node.value) and self.may_be_private(key):
            self.add(node, "a namespace read by a name built at run time that may be private", True)


def is_namespace(value: ast.expr) -> bool:
    """`vars(x)`, `globals()`, `locals()` or `x.__dict__`: an object's names as a dict."""
    if isinstance(value, ast.Attribute):
        return value.attr == "__dict__"
    return isinstance(value, ast.Call) and called_name(value) in NAMESPACES


def loop_literals(name: ast.Name, parents: dict[int, ast.AST]) -> list[str] | None:
    """The strings a loop (or a comprehension) enclosing `name` binds it to, when it loops over
    a literal list, tuple or set of strings; None otherwise."""
    node: ast.AST = name
    while (node := parents.get(id(node))) is not None:  # type: ignore[assignment]
        loops: Sequence[ast.For | ast.comprehension] = []
        if isinstance(node, ast.For):
            loops = [node]
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            loops = node.generators
        for loop in loops:
            if isinstance(loop.target, ast.Name) and loop.target.id == name.id:
                items = (
                    loop.iter.elts if isinstance(loop.iter, ast.List | ast.Tuple | ast.Set) else []
                )
                texts = [e.value for e in items if isinstance(e, ast.Constant)]
                strings = [t for t in texts if isinstance(t, str)]
                return strings if items and len(strings) == len(items) else None
    return None


def reached_nodes(file: SourceFile) -> list[ast.AST]:
    """The file's nodes less those of `main_block_nodes`, found once per file."""
    if "reached" not in file.memo:
        unreached = main_block_nodes(file)
        file.memo["reached"] = [n for n in file.nodes if id(n) not in unreached]
    return cast(list[ast.AST], file.memo["reached"])


def hook_routes(file: SourceFile) -> frozenset[Route]:
    """The routes of `RouteFinder.visit_hook` in the nodes the file reaches: they name no
    forbidden name, so each file's are found once whatever the question."""
    if "hooks" not in file.memo:
        finder = RouteFinder(file, set(), set())
        for node in reached_nodes(file):
            finder.visit_hook(node)
        file.memo["hooks"] = frozenset(finder.routes)
    return cast(frozenset[Route], file.memo["hooks"])


def main_block_nodes(file: SourceFile) -> set[int]:
    """The nodes of the file's top-level `if __name__ == "__main__":` blocks, which run when the
    file is run, never when it is imported (as the grader imports it), of the top-level
    functions only they name (a self-test against SDPA), and of tests pytest or unittest would
    collect, named nowhere else in the file. An `else` runs; so does every block of
    a file that could rename itself (`__name__` written or named in a string)."""
    assert file.tree is not None
    found: set[int] = set()
    if any(renames_itself(n) for n in file.nodes):
        return found
    for statement in file.tree.body:
        if isinstance(statement, ast.If) and runs_as_main(statement.test):
            found.update(id(n) for part in statement.body for n in ast.walk(part))
    # a top-level function named nowhere else in the file (a self-test the block calls)
    named = Counter(n.id for n in file.nodes if isinstance(n, ast.Name) and id(n) not in found)
    named.update(
        n.value for n in file.nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )
    for statement in file.tree.body:
        if not named[getattr(statement, "name", "")] and (
            only_main_calls(statement, bool(found)) or is_test(statement)
        ):
            found.update(id(n) for n in ast.walk(statement))
    return found


def only_main_calls(statement: ast.stmt, main_block: bool) -> bool:
    """A plain top-level function, where a `__main__` block may be what calls it."""
    return main_block and isinstance(statement, ast.FunctionDef) and not statement.decorator_list


def is_test(statement: ast.stmt) -> bool:
    """A test pytest or unittest collects (`def test_...`, `class Test...`, a `TestCase`),
    decorated by pytest at most: importing the module never runs it."""
    if isinstance(statement, ast.FunctionDef):
        marks = all(dotted(called_or(d)).startswith("pytest.") for d in statement.decorator_list)
        return statement.name.startswith("test") and marks
    if isinstance(statement, ast.ClassDef) and not statement.decorator_list:
        bases = [dotted(b).rpartition(".")[2] for b in statement.bases]
        return statement.name.startswith("Test") or "TestCase" in bases
    return False


def called_or(node: ast.expr) -> ast.expr:
    """What a decorator names: `pytest.mark.parametrize` of `@pytest.mark.parametrize(...)`."""
    return node.func if isinstance(node, ast.Call) else node


def renames_itself(node: ast.AST) -> bool:
    """`__name__` written (`__name__ = ...`, `m.__name__ = ...`) or named in a string."""
    if isinstance(node, ast.Name | ast.Attribute) and not isinstance(node.ctx, ast.Load):
        return (node.id if isinstance(node, ast.Name) else node.attr) == "__name__"
    return (
        isinstance(node, ast.Constant) and isinstance(node.value, str) and "__name__" in node.value
    )


def runs_as_main(test: ast.expr) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if (
        not isinstance(test, ast.Compare)
        or len(test.ops) != 1
        or not isinstance(test.ops[0], ast.Eq)
    ):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s.id for s in sides if isinstance(s, ast.Name)]
    texts = [s.value for s in sides if isinstance(s, ast.Constant)]
    return names == ["__name__"] and texts == ["__main__"]


def name_arguments(name: str, node: ast.Call) -> list[ast.expr]:
    """The arguments of a call that hold a name: the second of `getattr(obj, name, default)`,
    the first of `import_module(name)` (or its keyword), every one of `attrgetter(*names)`."""
    at = NAME_AT.get(name)
    if at is None:
        return node.args
    return [*node.args[at : at + 1], *(k.value for k in node.keywords if k.arg == "name")]


def find_routes(file: SourceFile, forbidden: set[str], defined: set[str]) -> list[Route]:
    """Every route to a forbidden name in one file, and every construct that hides one (found
    once per file and question)."""
    if file.tree is None:
        return []
    key = ("routes", frozenset(forbidden), frozenset(defined))
    if key not in file.memo:
        routes = RouteFinder(file, forbidden, defined).run()
        cookie = cookie_route(file.data)
        file.memo[key] = tuple(sorted([*routes, cookie]) if cookie else routes)
    return list(cast(tuple[Route, ...], file.memo[key]))
