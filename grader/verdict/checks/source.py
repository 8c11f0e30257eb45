"""Checks read from the candidate's source on the host: forbidden APIs, Python loops.

Each reads the problem's scope: its entry file and the candidate's modules it imports.
"""

from __future__ import annotations

from grader.reports.models import CheckStatus
from grader.verdict.checks.base import Check, Context, NoParams, Verdict, register
from grader.verdict.checks.loops import computing_loops, find_function
from grader.verdict.checks.routes import Route, find_routes
from grader.verdict.checks.scope import SourceFile
from grader.verdict.checks.values import passed


class ForbiddenParams(NoParams):
    names: list[str] | None = None


def scope(ctx: Context) -> list[SourceFile]:
    return ctx.sources.scope(ctx.spec.entry)


def shown(items: list[str]) -> str:
    more = f" (+{len(items) - 5} more)" if len(items) > 5 else ""
    return "; ".join(items[:5]) + more


@register("forbidden_api")
class ForbiddenApi(Check[ForbiddenParams]):
    """No forbidden API, proven used in the problem's files or seen running; and no construct
    whose only use is to hide such a route (tampering)."""

    def names(self) -> set[str]:
        return set(self.params.names if self.params.names is not None else self.problem.forbidden)

    def judge(self, ctx: Context) -> Verdict:
        names = self.names()
        files = scope(ctx)
        defined = set().union(*(f.defined for f in files))
        routes: list[tuple[SourceFile, Route]] = [
            (f, route) for f in files for route in find_routes(f, names, defined)
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


@register("python_loop")
class PythonLoop(Check[LoopParams]):
    """A function loops over the heads in Python (`loop = true`) or does not (`loop = false`):
    a live loop that computes (a matmul, an attention primitive, or a call to the candidate's
    code that does one), in the function or the candidate's functions it calls."""

    def judge(self, ctx: Context) -> Verdict:
        name = self.params.function
        sources = ctx.sources
        entry = sources.files.get(self.problem.entry)
        function = find_function(sources, entry, name) if entry else None
        if function is None:
            return Verdict(CheckStatus.failed, f"no function {name} found")
        loops = computing_loops(sources, function)
        if self.params.loop and not loops:
            return Verdict(
                CheckStatus.failed,
                f"{name} has no Python loop over the heads that computes them (a loop inside "
                "an assert or after a return never runs)",
            )
        if not self.params.loop and loops:
            where, loop = loops[0]
            return Verdict(
                CheckStatus.failed,
                f"{name} loops in Python at {where.file.path}:{getattr(loop, 'lineno', 0)} "
                f"(in {where.node.name}): compute all heads with one batched matmul",
            )
        return passed()
