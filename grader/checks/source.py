"""Checks read from the candidate's source on the host: forbidden APIs, Python loops.

Each reads the problem's scope: its entry file and the candidate's modules it imports.
"""

from __future__ import annotations

import ast

from grader.checks.base import Check, Context, NoParams, Verdict, register
from grader.checks.routes import Route, find_routes, import_bindings, own_names, resolve
from grader.checks.scope import SourceFile, Sources
from grader.checks.values import passed
from grader.report import CheckStatus


class ForbiddenParams(NoParams):
    names: list[str] | None = None


def scope(ctx: Context) -> list[SourceFile]:
    return Sources(ctx.sources).scope(ctx.spec.entry)


def shown(items: list[str]) -> str:
    more = f" (+{len(items) - 5} more)" if len(items) > 5 else ""
    return "; ".join(items[:5]) + more


@register("forbidden_api")
class ForbiddenApi(Check):
    """No forbidden API, proven used in the problem's files or seen running; and no construct
    whose only use is to hide such a route (tampering)."""

    params_model = ForbiddenParams

    def names(self) -> set[str]:
        return set(self.params.names if self.params.names is not None else self.problem.forbidden)

    def judge(self, ctx: Context) -> Verdict:
        names = self.names()
        files = scope(ctx)
        defined = set().union(*(own_names(f.tree) for f in files if f.tree is not None))
        routes: list[tuple[SourceFile, Route]] = [
            (f, route)
            for f in files
            if f.tree is not None
            for route in find_routes(f.text, f.tree, names, defined)
        ]
        tampering = [f"{r.what} at {f.path}:{r.line}" for f, r in routes if r.tampering]
        if tampering:
            return Verdict(
                CheckStatus.failed,
                f"tampering: {shown(tampering)}: this construct can only hide a forbidden route",
            )
        uses = [f"{r.what} at {f.path}:{r.line}" for f, r in routes]
        traced = {
            entry.fn
            for result in ctx.sub.probes.values()
            for call in result.data.calls
            for entry in call.trace
            if entry.fn.split(".")[-1] in names or entry.fn.split(".")[0] in names
        }
        uses += [f"{fn} was called at run time" for fn in sorted(traced)]
        if uses:
            return Verdict(CheckStatus.failed, f"forbidden: {shown(uses)}")
        return passed("no forbidden API")


class LoopParams(NoParams):
    function: str
    loop: bool


Definition = ast.FunctionDef | ast.ClassDef


def top_level(tree: ast.Module, name: str) -> Definition | None:
    found = [n for n in tree.body if isinstance(n, Definition) and n.name == name]
    return found[-1] if found else None


def imported_from(sources: Sources, file: SourceFile, expr: ast.expr) -> tuple[SourceFile, str]:
    """The candidate's file and name an expression refers to (`Base`, `helpers.Base`)."""
    assert file.tree is not None
    path = resolve(expr, import_bindings(file.tree))
    if path is None:
        return file, ast.unparse(expr)
    module, _, name = path.rpartition(".")
    own = sources.own(module)
    return (own, name) if own is not None else (file, path)


def find_function(
    sources: Sources, file: SourceFile, dotted: str, depth: int = 0
) -> ast.FunctionDef | None:
    """`function` or `Class.method` as the candidate's code defines it: in the file, through
    an import of another of their files, or inherited from a base class in any of them."""
    if file.tree is None or depth > 8:
        return None
    head, _, method = dotted.partition(".")
    node = top_level(file.tree, head)
    if node is None:
        other, name = imported_from(sources, file, ast.Name(head))
        return (
            None
            if other is file
            else find_function(sources, other, f"{name}.{method}".rstrip("."), depth + 1)
        )
    if not method:
        return node if isinstance(node, ast.FunctionDef) else None
    if not isinstance(node, ast.ClassDef):
        return None
    found = top_level(ast.Module(body=node.body, type_ignores=[]), method)
    if isinstance(found, ast.FunctionDef):
        return found
    for base in node.bases:
        other, name = imported_from(sources, file, base)
        inherited = find_function(sources, other, f"{name}.{method}", depth + 1)
        if inherited is not None:
            return inherited
    return None


LOOPS = (ast.For, ast.While, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)


def fixed_count(loop: ast.AST) -> bool:
    """A loop over a literal tuple or list (`for t in (q, k, v)`): a fixed count, not the heads."""
    if isinstance(loop, ast.For):
        iterables = [loop.iter]
    elif isinstance(loop, ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp):
        iterables = [g.iter for g in loop.generators]
    else:
        return False
    return all(isinstance(i, ast.Tuple | ast.List) for i in iterables)


@register("python_loop")
class PythonLoop(Check):
    """A function loops in Python (`loop = true`) or does not (`loop = false`)."""

    params_model = LoopParams

    def judge(self, ctx: Context) -> Verdict:
        sources = Sources(ctx.sources)
        entry = sources.files.get(self.problem.entry)
        function = find_function(sources, entry, self.params.function) if entry else None
        if function is None:
            return Verdict(CheckStatus.failed, f"no function {self.params.function} found")
        loops = [n for n in ast.walk(function) if isinstance(n, LOOPS) and not fixed_count(n)]
        if self.params.loop and not loops:
            return Verdict(
                CheckStatus.failed, f"{self.params.function} has no Python loop over the heads"
            )
        if not self.params.loop and loops:
            return Verdict(
                CheckStatus.failed,
                f"{self.params.function} loops in Python at line {loops[0].lineno}: "
                "compute all heads with one batched matmul",
            )
        return passed()
