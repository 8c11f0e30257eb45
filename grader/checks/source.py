"""Checks read from the candidate's source on the host: forbidden APIs, Python loops."""

from __future__ import annotations

import ast

from grader.checks.base import Check, Context, NoParams, Verdict, register
from grader.checks.values import passed
from grader.report import CheckStatus

DYNAMIC = {"eval", "exec", "compile", "__import__", "importlib", "vars", "globals", "locals"}
REFLECTIVE = {"getattr", "hasattr"}


def parse(ctx: Context, name: str) -> ast.Module | None:
    try:
        return ast.parse(ctx.sources[name], filename=name)
    except (SyntaxError, ValueError):
        return None


def forbidden_uses(tree: ast.Module, names: set[str]) -> list[tuple[int, str]]:
    """Every route to a forbidden name the source shows, with its line."""
    found: list[tuple[int, str]] = []
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name) and node.id in names | DYNAMIC:
            found.append((line, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in names | {"_C", "__dict__"}:
            found.append((line, node.attr))
        elif isinstance(node, ast.alias) and (
            node.name.split(".")[-1] in names
            or "_C" in node.name.split(".")
            or node.name.split(".")[0] == "importlib"
        ):
            found.append((line, node.name))
        elif isinstance(node, ast.ImportFrom) and node.module and "_C" in node.module.split("."):
            found.append((line, node.module))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            found += [(line, f"'{n}' in a string") for n in names if n in node.value]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in REFLECTIVE
            and len(node.args) > 1
            and not isinstance(node.args[1], ast.Constant)
            and not (isinstance(node.args[0], ast.Name) and node.args[0].id == "self")
        ):
            found.append((line, f"{node.func.id} with a computed name"))
    return sorted(set(found))


class ForbiddenParams(NoParams):
    names: list[str] | None = None


@register("forbidden_api")
class ForbiddenApi(Check):
    """No route to a forbidden API: by name, alias, string, reflection or torch._C, in any of
    the candidate's files; and no forbidden function was seen running."""

    params_model = ForbiddenParams

    def names(self) -> set[str]:
        return set(self.params.names if self.params.names is not None else self.problem.forbidden)

    def judge(self, ctx: Context) -> Verdict:
        names = self.names()
        uses: list[str] = []
        for file in sorted(ctx.sources):
            tree = parse(ctx, file)
            if tree is None:
                continue
            uses += [f"{what} at {file}:{line}" for line, what in forbidden_uses(tree, names)]
        traced = {
            entry.fn
            for result in ctx.sub.probes.values()
            for call in result.data.calls
            for entry in call.trace
            if entry.fn.split(".")[-1] in names or entry.fn.split(".")[0] in names
        }
        uses += [f"{fn} was called at run time" for fn in sorted(traced)]
        if uses:
            shown = "; ".join(uses[:5]) + (f" (+{len(uses) - 5} more)" if len(uses) > 5 else "")
            return Verdict(CheckStatus.failed, f"forbidden: {shown}")
        return passed("no forbidden API")


class LoopParams(NoParams):
    function: str
    loop: bool


def find_function(tree: ast.Module, dotted: str) -> ast.FunctionDef | None:
    scope: list[ast.stmt] = tree.body
    *owners, name = dotted.split(".")
    for owner in owners:
        classes = [n for n in scope if isinstance(n, ast.ClassDef) and n.name == owner]
        if not classes:
            return None
        scope = classes[0].body
    functions = [n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name]
    return functions[-1] if functions else None


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
        tree = parse(ctx, self.problem.entry)
        function = find_function(tree, self.params.function) if tree else None
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
