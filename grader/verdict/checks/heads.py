"""Whether a function loops over the heads in Python, judged by what it runs: the same call
with 1, 2 and 4 heads, the operators it runs counted at torch's dispatcher in the sandbox. The
loops read from its source explain a verdict; they do not decide it."""

from __future__ import annotations

import itertools

from pydantic import Field

from grader.reports.models import CheckStatus
from grader.sandboxing.owntext import own
from grader.sandboxing.results import OpCount
from grader.specs.problem import CheckId, CheckSpec, Config, ModuleArg, ProblemSpec
from grader.verdict.checks.base import Check, Context, NoParams, Verdict, register
from grader.verdict.checks.loops import computing_loops, find_function
from grader.verdict.checks.values import passed
from grader.verdict.plan import Plan


class LoopParams(NoParams):
    function: str  # `function` or `Class.method`, as the candidate's code defines it
    loop: bool  # whether it must loop over the heads
    config: str | None = None  # the config run with each head count (none: read the source only)
    heads_from: str = "init.num_heads"  # where its head count is: "init.KEY" or "argN.init.KEY"
    heads: list[int] = Field(default_factory=lambda: [1, 2, 4], min_length=2)


def with_heads(config: Config, heads_from: str, heads: int) -> Config:
    """`config` with its head count (at `heads_from`) set to `heads`."""
    *owner, key = heads_from.split(".")
    changed = f"{config.id}_heads{heads}"
    if owner == ["init"]:
        return config.model_copy(
            update={"id": changed, "init": {**(config.init or {}), key: heads}}
        )
    if len(owner) != 2 or not owner[0].startswith("arg") or owner[1] != "init":
        raise ValueError(f"heads_from {heads_from!r}: expected init.KEY or argN.init.KEY")
    index = int(owner[0].removeprefix("arg"))
    arg = config.args[index] if index < len(config.args) else None
    if not isinstance(arg, ModuleArg):
        raise ValueError(f"heads_from {heads_from!r}: argument {index} is not a module")
    args = list(config.args)
    args[index] = arg.model_copy(update={"init": {**arg.init, key: heads}})
    return config.model_copy(update={"id": changed, "args": args})


def growing(counts: list[int]) -> bool:
    return all(a < b for a, b in itertools.pairwise(counts))


@register(CheckId.python_loop)
class PythonLoop(Check[LoopParams]):
    """A function loops over the heads in Python (`loop = true`) or does not (`loop = false`).
    With a `config`, decided by what one call runs with each of `heads` heads, counted at
    torch's dispatcher: with a loop, its products and its softmaxes over tokens by tokens each
    grow with the head count and none of its softmaxes is larger than the reference's (one
    head's weights); without, the operators it runs are the same however many heads (from two
    on: one head may skip the split). A call that hands its tensors' values out of torch
    (NumPy, a list, a number) fails either way: what it computes there is never counted. The
    live loops that compute, read from its source (in the function and the candidate's
    functions it calls), explain the verdict, and decide it without a `config`."""

    def __init__(self, spec: CheckSpec, problem: ProblemSpec) -> None:
        super().__init__(spec, problem)
        if self.params.config is not None:
            base = self.problem.config(self.params.config)
            self.variants = [with_heads(base, self.params.heads_from, h) for h in self.params.heads]

    def prepare(self, plan: Plan) -> None:
        if self.params.config is not None:
            self.probes = [plan.call_probe(c, count_ops=True) for c in self.variants]

    def judge(self, ctx: Context) -> Verdict:
        name = self.params.function
        entry = ctx.sources.files.get(self.problem.entry)
        function = find_function(ctx.sources, entry, name) if entry else None
        loops = computing_loops(ctx.sources, function) if function is not None else []
        where = ""
        if loops:
            found, loop = loops[0]
            where = f" at {found.file.path}:{getattr(loop, 'lineno', 0)} (in {found.node.name})"
        if self.params.config is None:
            return self.by_source(function is not None, bool(loops), where)
        ops = [ctx.result(p).data.calls[0].ops for p in self.probes]
        counted = [c for c in ops if c is not None]
        if len(counted) < len(ops):
            return Verdict(CheckStatus.failed, "the torch functions it runs were not counted")
        if any(c.left for c in counted):
            return Verdict(
                CheckStatus.failed,
                f"{name} handed its tensors' values out of torch (.numpy(), .tolist(), .item(), "
                "Tensor.apply_), where the work done on them is not counted: compute with "
                "torch's operations",
            )
        if any(c.unseen for c in counted):
            return Verdict(
                CheckStatus.failed,
                f"{name}'s torch operations were not all counted: its code ran where they are "
                "not seen (called back from inside a torch function or operator such as "
                "Tensor.apply_, or in another thread or process)",
            )
        heads = ", ".join(map(str, self.params.heads))
        if any(c.products < 2 or c.softmaxes < 1 for c in counted):
            return Verdict(
                CheckStatus.failed,
                f"{name}'s torch operations were not all counted: attention takes two products "
                "and a softmax over tokens by tokens, at least",
            )
        if self.params.loop:
            return self.by_heads(ctx, counted, heads)
        totals = [c.all for c in counted]
        # one head may take a shorter path (no split, no merge): a loop shows from two on
        several = [t for t, h in zip(totals, self.params.heads, strict=True) if h > 1]
        if len(set(several or totals)) > 1:
            shown = own(f"{totals} for {heads} heads", f"for {heads} heads")
            return Verdict(
                CheckStatus.failed,
                f"{name} runs other torch operations with other head counts ({shown}): it "
                f"loops over the heads in Python{where}; compute all heads with one batched "
                "matmul",
            )
        return passed()

    def by_heads(self, ctx: Context, counted: list[OpCount], heads: str) -> Verdict:
        """A loop over the heads: its products and softmaxes grow with the head count, and no
        softmax holds more than the reference's largest (one head's weights) at any count. A
        softmax of all heads at once is larger whatever else runs beside it."""
        name = self.params.function
        reference = [ctx.reference(p).data.calls[0].ops for p in self.probes]
        if any(r is None for r in reference):
            return Verdict(CheckStatus.error, "the reference's operations were not counted")
        work = [[c.products for c in counted], [c.softmaxes for c in counted]]
        if not all(growing(w) for w in work):
            shown = own(f" ({work[0]} products, {work[1]} softmaxes for {heads} heads)", "")
            return Verdict(
                CheckStatus.failed,
                f"{name} does not do more attention work with more heads{shown}: compute "
                "each head's products and softmax in its own iteration of a Python loop",
            )
        pairs = zip(counted, reference, strict=True)
        largest = [(c.largest, r.largest) for c, r in pairs if r is not None]
        over = [(got, one) for got, one in largest if got > one]
        if over:
            got, one = over[0]
            shown = own(f" ({got} values, one head's are {one})", "")
            return Verdict(
                CheckStatus.failed,
                f"{name} computes the weights of more than one head in one softmax{shown}: "
                "compute each head's softmax in its own iteration of a Python loop",
            )
        return passed()

    def by_source(self, found: bool, loops: bool, where: str) -> Verdict:
        name = self.params.function
        if not found:
            return Verdict(CheckStatus.failed, f"no function {name} found")
        if self.params.loop and not loops:
            return Verdict(
                CheckStatus.failed,
                f"{name} has no Python loop over the heads that computes them (a loop inside "
                "an assert or after a return never runs)",
            )
        if not self.params.loop and loops:
            return Verdict(
                CheckStatus.failed,
                f"{name} loops in Python{where}: compute all heads with one batched matmul",
            )
        return passed()
