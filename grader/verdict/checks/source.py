"""Checks read from the candidate's source on the host: forbidden APIs (with what the
sandbox's policy guard reported).

Each reads the problem's scope: its entry file and the candidate's modules it imports.
"""

from __future__ import annotations

import ast

from pydantic import Field

from grader.reports.models import CheckStatus
from grader.specs.problem import CheckId, CheckSpec, ProblemSpec
from grader.verdict.checks import guard
from grader.verdict.checks.base import Check, Context, NoParams, Verdict, register
from grader.verdict.checks.routes import Route, find_routes
from grader.verdict.checks.scope import SourceFile, Unreadable
from grader.verdict.checks.values import passed
from sandbox.protocol import family_of

DEFINITIONS = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


class ForbiddenParams(NoParams):
    names: list[str] | None = Field(
        None,
        description="Bare names of torch's functions, methods or modules (`softmax`, "
        "`scaled_dot_product_attention`), found however the source reaches them (`torch.`, "
        "`F.`, a tensor's method, an alias); default: the spec's `forbidden`.",
    )


def torch_name(name: str) -> str:
    """`name`, if torch, torch.nn, torch.nn.functional or a tensor has it; else ValueError."""
    import torch

    homes = (torch, torch.nn, torch.nn.functional, torch.Tensor)
    if not name.isidentifier():
        raise ValueError(f"{name!r}: give the bare name (softmax, not torch.softmax)")
    if not any(hasattr(home, name) for home in homes):
        raise ValueError(f"{name!r} is not a name of torch, torch.nn or torch.nn.functional")
    return name


def scope(ctx: Context) -> list[SourceFile]:
    return ctx.sources.scope(ctx.spec.entry)


def shown(items: list[str]) -> str:
    more = f" (+{len(items) - 5} more)" if len(items) > 5 else ""
    return "; ".join(items[:5]) + more


def unreadable_at(path: str, unreadable: Unreadable) -> str:
    """`helper.py:3: SyntaxError: invalid syntax`: which file the grader cannot read, and why."""
    line = f":{unreadable.line}" if unreadable.line else ""
    return f"{path}{line}: {unreadable.why}"


def own_lines(ctx: Context) -> dict[str, list[tuple[int, int]]]:
    """Where an entry file that only re-exports a module (`from homework import *`, as a
    notebook for the whole set is graded) defines the problem's names: the lines of that
    module's top-level classes and functions of those names, the entry file's own code."""
    entry = ctx.sources.files.get(ctx.spec.entry)
    body = entry.tree.body if entry is not None and entry.tree is not None else []
    star = body[0] if len(body) == 1 else None
    if not isinstance(star, ast.ImportFrom) or star.level or [a.name for a in star.names] != ["*"]:
        return {}
    module = ctx.sources.own(star.module or "")
    if module is None or module.tree is None:
        return {}
    spans = [
        (min([d.lineno, *(x.lineno for x in d.decorator_list)]), d.end_lineno or d.lineno)
        for d in module.tree.body
        if isinstance(d, DEFINITIONS) and d.name in ctx.spec.symbols
    ]
    return {module.path: spans}


@register(CheckId.forbidden_api)
class ForbiddenApi(Check[ForbiddenParams]):
    """No forbidden API, proven used in the problem's entry file (outside its `__main__` block)
    or in the definitions of its names that an entry file only re-exports, in a helper where
    the sandbox's guard does not refuse it, or refused at run time (then its helpers' uses are
    named too); no construct, in any file the problem may run, whose only use
    is to hide such a route (tampering); and no file there the grader cannot read."""

    def __init__(self, spec: CheckSpec, problem: ProblemSpec) -> None:
        super().__init__(spec, problem)
        for name in self.names():
            torch_name(name)

    def names(self) -> set[str]:
        return set(self.params.names if self.params.names is not None else self.problem.forbidden)

    def judge(self, ctx: Context) -> Verdict:
        names = self.names()
        files = scope(ctx)
        unreadable = [unreadable_at(f.path, u) for f in files if (u := f.unreadable) is not None]
        if unreadable:
            return Verdict(
                CheckStatus.failed,
                f"unreadable: {shown(unreadable)}: the grader fails a file it cannot read",
            )
        defined = set().union(*(f.defined for f in files))
        routes: list[tuple[SourceFile, Route]] = [
            (f, route) for f in files for route in find_routes(f, names, defined)
        ]
        tampering = [f"{r.what} at {f.path}:{r.line}" for f, r in routes if r.tampering]
        tampering += guard.tampered(ctx.sub)
        if tampering:
            return Verdict(
                CheckStatus.failed,
                f"tampering: {shown(tampering)}: this construct can only hide a forbidden route",
            )
        refused = guard.refused(ctx.sub)
        # A helper the problem imports may hold another problem's route (the flash path of a
        # shared module): what the problem ran of it the guard refused. The entry file's uses
        # count, and a helper's of a name the guard does not refuse (an instructor's own).
        unguarded = [name for name in self.names() if family_of(name) is None]
        own = own_lines(ctx)
        uses = [
            f"{r.what} at {f.path}:{r.line}"
            for f, r in routes
            if f.path == ctx.spec.entry
            or refused
            or any(n in r.what for n in unguarded)
            or any(start <= r.line <= end for start, end in own.get(f.path, []))
        ]
        uses += refused
        if uses:
            return Verdict(CheckStatus.failed, f"forbidden: {shown(uses)}")
        return passed("no forbidden API")
