"""The code a function runs, read from source: its definition (through imports and base
classes), the candidate's functions it calls, and the live Python loops among them that
compute attention."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from grader.verdict.checks.bindings import dotted, resolve
from grader.verdict.checks.scope import SourceFile, Sources

Definition = ast.FunctionDef | ast.ClassDef
LOOPS = (ast.For, ast.While, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)
# Calls that compute attention: a loop holding none of them (nor `@`) computes no heads.
COMPUTE = {"matmul", "bmm", "mm", "einsum", "softmax", "linear", "baddbmm", "tensordot"}
ENDS_BLOCK = (ast.Return, ast.Raise, ast.Continue, ast.Break)


@dataclass(frozen=True)
class Function:
    file: SourceFile
    node: ast.FunctionDef
    owner: str | None  # the class, for `self.method` calls


def top_level(body: list[ast.stmt], name: str) -> Definition | None:
    found = [n for n in body if isinstance(n, Definition) and n.name == name]
    return found[-1] if found else None


def imported_from(sources: Sources, file: SourceFile, expr: ast.expr) -> tuple[SourceFile, str]:
    """The candidate's file and name an expression refers to (`Base`, `helpers.Base`)."""
    assert file.tree is not None
    path = resolve(expr, file.bindings)
    if path is None:
        return file, dotted(expr)
    module, _, name = path.rpartition(".")
    own = sources.own(module)
    return (own, name) if own is not None else (file, path)


def find_function(sources: Sources, file: SourceFile, dotted: str) -> Function | None:
    """`function` or `Class.method` as the candidate's code defines it: in the file, through
    an import of another of their files, or inherited from a base class in any of them (bases
    searched depth first, left to right, each class once: a lattice of bases costs its size)."""
    stack = [(file, dotted)]
    seen: set[tuple[str, str]] = set()
    while stack:
        current, name = stack.pop()
        if current.tree is None or (current.path, name) in seen:
            continue
        seen.add((current.path, name))
        head, _, method = name.partition(".")
        node = top_level(current.tree.body, head)
        if node is None:
            other, imported = imported_from(sources, current, ast.Name(head))
            if other is not current:
                stack.append((other, f"{imported}.{method}".rstrip(".")))
            continue
        if not method or not isinstance(node, ast.ClassDef):
            if not method and isinstance(node, ast.FunctionDef):
                return Function(current, node, None)
            continue
        found = top_level(node.body, method)
        if isinstance(found, ast.FunctionDef):
            return Function(current, found, node.name)
        bases = [imported_from(sources, current, base) for base in node.bases]
        stack.extend((other, f"{base}.{method}") for other, base in reversed(bases))
    return None


def live_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node that can run, in source order: not after a return or raise in its block, not in
    an assert, not in a nested function or class (reached only if called). Walked with a stack
    of its own, however deep the code."""
    stack: list[Iterator[ast.AST]] = [live_statements(body)]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        yield node
        stack.append(live_children(node))


def live_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for statement in body:
        if isinstance(statement, ast.Assert | ast.FunctionDef | ast.ClassDef):
            continue
        yield statement
        if isinstance(statement, ENDS_BLOCK):
            return


def live_children(node: ast.AST) -> Iterator[ast.AST]:
    for name, value in ast.iter_fields(node):
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield from live_statements(value)
        elif isinstance(value, list):
            yield from (item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST) and name != "decorator_list":
            yield value


class CallGraph:
    """The candidate's functions reachable from one, by direct calls and `self.method()`."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self.memo: dict[int, bool] = {}

    def callee(self, caller: Function, call: ast.Call) -> Function | None:
        func = call.func
        if isinstance(func, ast.Name):
            return find_function(self.sources, caller.file, func.id)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and caller.owner is not None
        ):
            return find_function(self.sources, caller.file, f"{caller.owner}.{func.attr}")
        if isinstance(func, ast.Attribute):
            other, name = imported_from(self.sources, caller.file, func)
            if other is not caller.file:
                return find_function(self.sources, other, name)
        return None

    def reachable(self, start: Function) -> list[Function]:
        seen = {id(start.node): start}
        queue = [start]
        while queue and len(seen) < 64:
            current = queue.pop()
            for node in live_nodes(current.node.body):
                if isinstance(node, ast.Call):
                    found = self.callee(current, node)
                    if found is not None and id(found.node) not in seen:
                        seen[id(found.node)] = found
                        queue.append(found)
        return list(seen.values())

    def computes(self, function: Function, node: ast.AST) -> bool:
        """`node` holds a matmul, an attention primitive, or a call to the candidate's code
        that does: each function called is read once (a recursive call adds nothing), with a
        stack of its own, however long the chain of calls."""
        # each frame: a function, its nodes still to read, its key in `memo` (None: `node`)
        stack: list[tuple[Function, Iterator[ast.AST], int | None]] = [
            (function, ast.walk(node), None)
        ]
        while stack:
            current, nodes, key = stack[-1]
            called = self.next_call(current, nodes)
            if isinstance(called, Function):
                self.memo[id(called.node)] = False
                stack.append((called, ast.walk(called.node), id(called.node)))
                continue
            stack.pop()
            if key is not None:
                self.memo[key] = called
            if called:  # and so does every caller on the stack
                for _, _, caller in stack:
                    if caller is not None:
                        self.memo[caller] = True
                return True
        return False

    def next_call(self, function: Function, nodes: Iterator[ast.AST]) -> Function | bool:
        """Reads on in `function`: True at a computation, the next of the candidate's functions
        called that is still to be read, or False at the end."""
        for inner in nodes:
            if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.MatMult):
                return True
            if not isinstance(inner, ast.Call):
                continue
            func = inner.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in COMPUTE:
                return True
            found = self.callee(function, inner)
            if found is None:
                continue
            known = self.memo.get(id(found.node))
            if known is None:
                return found
            if known:
                return True
        return False


def fixed_count(loop: ast.AST) -> bool:
    """A loop over a literal tuple or list (`for t in (q, k, v)`): a fixed count, not the heads."""
    if isinstance(loop, ast.For):
        iterables = [loop.iter]
    elif isinstance(loop, ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp):
        iterables = [g.iter for g in loop.generators]
    else:
        return False
    return all(isinstance(i, ast.Tuple | ast.List) for i in iterables)


def computing_loops(sources: Sources, start: Function) -> list[tuple[Function, ast.AST]]:
    """The live loops that compute attention in `start` and the candidate's code it calls."""
    graph = CallGraph(sources)
    return [
        (function, node)
        for function in graph.reachable(start)
        for node in live_nodes(function.node.body)
        if isinstance(node, LOOPS) and not fixed_count(node) and graph.computes(function, node)
    ]
