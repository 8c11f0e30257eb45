"""A submission's helpers inlined where they are called, before its code is canonical: code moved
into a helper (in the same file or another of the submission's modules, a function or a method
called on `self`) reads as it would written out in place, and code a copier wrote out in place
of the original's helpers reads as the original's.

A helper whose body is a single `return EXPR` becomes EXPR where it is called; one of several
statements ending in `return EXPR` (and no other `return`) has its statements put before the
statement that calls it and EXPR in place of the call; one with no `return` is inlined where it
is called as a statement. A parameter becomes the argument passed (its default if none is),
or, used more than once or assigned to, an assignment of it before the statements. A test of
whether an argument passed `is None` is taken as the call says, and a branch on a constant is
the branch it takes. Helpers that recurse, yield, return early, take `*args` or `**kwargs`, or
are too large stay called, and defined as before; a helper inlined at every place it is used
and not one of the problem's names is no longer defined."""

from __future__ import annotations

import ast
import copy
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

MAX_DEPTH = 4
"""Helpers inlined into helpers inlined, at most this deep."""
MAX_HELPER = 400
"""The most syntax nodes a helper inlined may have."""
MAX_INLINED = 6000
"""The most syntax nodes inlined into one document."""
STATEMENT_LISTS = ("body", "orelse", "finalbody")


@dataclass
class Helper:
    """A function or method that may be inlined: its parameters, statements and result."""

    node: ast.FunctionDef
    params: list[str]
    defaults: dict[str, ast.expr]
    returns: bool  # False: inlined only where called as a statement
    method: bool
    inlined: int = 0

    def parts(self) -> tuple[list[ast.stmt], ast.expr | None]:
        """Its statements before the `return`, and what it returns: copies of its body as it
        stands (its own helpers inlined or not, the same code)."""
        body = docstring_less(self.node.body)
        last = body[-1] if body else None
        if self.returns and isinstance(last, ast.Return):
            prelude, result = body[:-1], last.value or ast.Constant(None)
        else:
            prelude, result = body, None
        return copy.deepcopy((prelude, result))


def size(node: ast.AST) -> int:
    return sum(1 for _ in ast.walk(node))


def own_nodes(statements: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of statements, not those of functions, lambdas and classes defined in them."""
    todo: list[ast.AST] = list(statements)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo += ast.iter_child_nodes(node)


def docstring_less(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[1:]
    return body


def as_helper(node: ast.stmt, method: bool) -> Helper | None:
    """A function as a helper to inline, or None where it cannot be."""
    if not isinstance(node, ast.FunctionDef) or node.args.vararg or node.args.kwarg:
        return None
    if any(not (isinstance(d, ast.Name) and d.id == "staticmethod") for d in node.decorator_list):
        return None
    body = docstring_less(node.body)
    if not body or size(node) > MAX_HELPER:
        return None
    *prelude, last = body
    result: ast.expr | None = None
    if isinstance(last, ast.Return):
        result = last.value or ast.Constant(None)
    else:
        prelude = body
    unfit = (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal)
    if any(isinstance(n, unfit) for n in own_nodes(prelude)) or any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for n in prelude
    ):
        return None
    arguments = node.args
    positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args]]
    static = bool(node.decorator_list)
    if method and not static:
        if not positional:
            return None
        positional = positional[1:]
    defaults = dict(zip(positional[::-1], arguments.defaults[::-1], strict=False))
    defaults |= {
        a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d
    }
    params = positional + [a.arg for a in arguments.kwonlyargs]
    return Helper(node, params, defaults, result is not None, method and not static)


def simple(node: ast.expr) -> bool:
    """An argument that may be written wherever its parameter is used: a name, a constant, an
    attribute of a name."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name | ast.Constant)


class Substitute(ast.NodeTransformer):
    """Parameters replaced by their arguments; what was put in place is remembered."""

    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values = values
        self.put: set[int] = set()

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            value = copy.deepcopy(self.values[node.id])
            self.put.add(id(value))
            return value
        return node


def known(node: ast.expr, put: Collection[int]) -> bool | None:
    """Whether a test is true, where it can be told: a constant, `not` one, or whether an
    argument passed is None."""
    if isinstance(node, ast.Constant):
        return bool(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = known(node.operand, put)
        return None if inner is None else not inner
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Is | ast.IsNot)
    ):
        sides = [node.left, node.comparators[0]]
        nones = [isinstance(s, ast.Constant) and s.value is None for s in sides]
        other = sides[1] if nones[0] else sides[0]
        if any(nones) and (isinstance(other, ast.Constant) or id(other) in put):
            is_none = isinstance(other, ast.Constant) and other.value is None
            return is_none == isinstance(node.ops[0], ast.Is)
    return None


class Fold(ast.NodeTransformer):
    """Branches on tests that `known` can tell replaced by the branch taken."""

    def __init__(self, put: Collection[int]) -> None:
        self.put = put

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        taken = known(node.test, self.put)
        if taken is None:
            return node
        return (node.body if taken else node.orelse) or []

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        taken = known(node.test, self.put)
        if taken is None:
            return node
        return node.body if taken else node.orelse


class Helpers(dict[str, Helper | None]):
    """The functions the modules define, as helpers, made when first called for."""

    def __init__(self, definitions: dict[str, ast.FunctionDef], method: bool) -> None:
        super().__init__()
        self.definitions, self.method = definitions, method

    def __missing__(self, name: str) -> Helper | None:
        node = self.definitions.get(name)
        self[name] = found = None if node is None else as_helper(node, self.method)
        return found


@dataclass
class Inliner:
    """Inlines the helpers of a submission's modules into their code."""

    functions: Helpers
    modules: set[str]
    budget: int = MAX_INLINED
    methods: Helpers = field(default_factory=lambda: Helpers({}, method=True))

    def resolve(self, call: ast.Call) -> Helper | None:
        func = call.func
        if isinstance(func, ast.Name):
            return self.functions[func.id]
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "self":
                return self.methods[func.attr]
            if func.value.id in self.modules:
                return self.functions[func.attr]
        return None

    def bind(self, helper: Helper, call: ast.Call) -> dict[str, ast.expr] | None:
        """Each parameter's argument, or default; None where the call cannot be told apart."""
        if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(
            helper.params
        ):
            return None
        values = dict(zip(helper.params, call.args, strict=False))
        for word in call.keywords:
            if word.arg is None or word.arg not in helper.params or word.arg in values:
                return None
            values[word.arg] = word.value
        return {**{p: d for p, d in helper.defaults.items() if p not in values}, **values}

    def expand(
        self, helper: Helper, call: ast.Call, stack: tuple[ast.FunctionDef, ...]
    ) -> tuple[list[ast.stmt], ast.expr | None] | None:
        """The statements and result a call of `helper` stands for, or None: not inlined."""
        if len(stack) >= MAX_DEPTH or helper.node in stack or self.budget <= 0:
            return None
        values = self.bind(helper, call)
        if values is None:
            return None
        prelude, result = helper.parts()
        where: list[ast.AST] = [*prelude, *([result] if result else [])]
        assigned = {
            n.id
            for s in where
            for n in ast.walk(s)
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        }
        used: dict[str, int] = {}
        for node in (n for s in where for n in ast.walk(s)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                used[node.id] = used.get(node.id, 0) + 1
        put, bound = {}, []
        for param, value in values.items():
            if param in assigned or (used.get(param, 0) > 1 and not simple(value)):
                bound.append(ast.Assign([ast.Name(param, ast.Store())], value, lineno=0))
            else:
                put[param] = value
        substitute = Substitute(put)
        fold = Fold(substitute.put)
        body = [fold.visit(substitute.visit(s)) for s in prelude]
        statements = bound + [s for s in flat(body)]
        if result is not None:
            result = fold.visit(substitute.visit(result))
        self.budget -= sum(size(s) for s in statements) + (size(result) if result else 0)
        helper.inlined += 1
        inner = (*stack, helper.node)
        statements = self.statements(statements, inner)
        if result is not None:
            calls = Calls(self, inner)
            result = calls.visit(result)
            statements += calls.prelude
        return statements, result

    def statements(
        self, body: list[ast.stmt], stack: tuple[ast.FunctionDef, ...] = ()
    ) -> list[ast.stmt]:
        """Statements with the helpers they call inlined."""
        found: list[ast.stmt] = []
        for node in body:
            if isinstance(node, ast.ClassDef):
                found.append(node)
                continue
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                node.body = self.statements(node.body, stack) or [ast.Pass()]
                found.append(node)
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                helper = self.resolve(node.value)
                if helper is not None and not helper.returns:
                    done = self.expand(helper, node.value, stack)
                    if done is not None:
                        found += located(done[0], node)
                        continue
            calls = Calls(self, stack)
            for name, value in ast.iter_fields(node):
                if isinstance(value, ast.expr):
                    setattr(node, name, calls.visit(value))
                elif isinstance(value, list) and value and isinstance(value[0], ast.withitem):
                    for item in value:
                        item.context_expr = calls.visit(item.context_expr)
            found += located(calls.prelude, node)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Name | ast.Constant):
                continue  # what was a call of a helper, its value unused
            for name in STATEMENT_LISTS:
                inner = getattr(node, name, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    setattr(node, name, self.statements(inner, stack) or [ast.Pass()])
            for handler in getattr(node, "handlers", None) or []:
                handler.body = self.statements(handler.body, stack) or [ast.Pass()]
            found.append(node)
        return found


def located(statements: list[ast.stmt], where: ast.stmt) -> list[ast.stmt]:
    """Statements inlined, placed at the statement that calls their helper."""
    first = getattr(where, "lineno", 1)
    last = getattr(where, "end_lineno", None) or first
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.stmt | ast.expr):
                node.lineno, node.end_lineno = first, last
    return statements


def flat(nodes: list[ast.AST | list[ast.stmt]]) -> Iterator[ast.stmt]:
    for node in nodes:
        if isinstance(node, list):
            yield from node
        elif isinstance(node, ast.stmt):
            yield node


class Calls(ast.NodeTransformer):
    """A statement's expressions with the helpers they call inlined: the helpers' statements
    gathered in `prelude`, to go before the statement."""

    def __init__(self, inliner: Inliner, stack: tuple[ast.FunctionDef, ...]) -> None:
        self.inliner, self.stack = inliner, stack
        self.prelude: list[ast.stmt] = []

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        helper = self.inliner.resolve(node)
        if helper is None or not helper.returns:
            return node
        done = self.inliner.expand(helper, node, self.stack)
        if done is None:
            return node
        statements, result = done
        self.prelude += statements
        assert result is not None
        return result


def module_helpers(trees: dict[str, ast.Module]) -> tuple[Helpers, set[str]]:
    """The functions the modules define, by the names they are called by (an alias of an
    import too), and the names the modules are imported as."""
    definitions: dict[str, ast.FunctionDef] = {}
    for tree in trees.values():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                definitions.setdefault(node.name, node)
    stems = {file.removesuffix(".py").removesuffix("/__init__") for file in trees}
    modules: set[str] = set()
    for tree in trees.values():
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module in stems:
                for alias in node.names:
                    if alias.asname and alias.name in definitions:
                        definitions.setdefault(alias.asname, definitions[alias.name])
            elif isinstance(node, ast.Import):
                modules |= {a.asname or a.name for a in node.names if a.name in stems}
    return Helpers(definitions, method=False), modules


def inline_helpers(trees: dict[str, ast.Module], kept: Collection[str]) -> None:
    """The modules (changed in place) with their helpers inlined; the definitions of helpers
    inlined wherever they are used gone, but for those named in `kept`."""
    functions, modules = module_helpers(trees)
    inliner = Inliner(functions, modules)
    for tree in trees.values():
        tree.body = inliner.statements(tree.body)
    methods: list[tuple[ast.ClassDef, Helpers]] = []
    for tree in trees.values():
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            inliner.methods = Helpers(
                {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}, method=True
            )
            cls.body = inliner.statements(cls.body) or [ast.Pass()]
            methods.append((cls, inliner.methods))
    used: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.Attribute):
                used.add(node.attr)
    for cls, helpers in methods:
        drop_unused(cls, helpers, {*kept, *used})
    for tree in trees.values():
        drop_unused(tree, functions, {*kept, *used})


def drop_unused(owner: ast.Module | ast.ClassDef, helpers: Helpers, kept: set[str]) -> None:
    """The definitions of `owner` of helpers inlined that nothing `kept` names, left out."""
    gone = {
        id(h.node)
        for name, h in helpers.items()
        if h is not None and h.inlined and name not in kept and h.node.name not in kept
    }
    if any(id(s) in gone for s in owner.body):
        owner.body = [s for s in owner.body if id(s) not in gone] or [ast.Pass()]
