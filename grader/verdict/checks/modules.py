"""Checks on how a module is composed of submodules: stacks of heads."""

from __future__ import annotations

from grader.reports.models import CheckStatus
from grader.sandboxing.owntext import own, own_name
from grader.specs.problem import CheckId
from grader.verdict.checks.base import Context, Verdict, register
from grader.verdict.checks.returned import CLASSES, typed
from grader.verdict.checks.structure import Inspecting, OneConfigParams
from grader.verdict.checks.values import passed


class DistinctHeadsParams(OneConfigParams):
    container: str = "heads"
    count_from: str = "num_heads"


@register(CheckId.distinct_heads)
class DistinctHeads(Inspecting[DistinctHeadsParams]):
    """`container` is an nn.ModuleList of as many distinct modules as the constructor argument
    `count_from` says, in order, no two sharing a parameter tensor."""

    def judge(self, ctx: Context) -> Verdict:
        got, _ = self.inspected(ctx)
        name = self.params.container
        count = int((self.config().init or {})[self.params.count_from])
        types = {m.name: m.type for m in got.modules}
        if name not in types:
            return Verdict(
                CheckStatus.failed,
                f"no submodule {name}: keep the heads in an nn.ModuleList (a plain list does not "
                "register their parameters)",
            )
        if types[name] != "ModuleList":
            kind = typed(types[name], "module", CLASSES)
            return Verdict(CheckStatus.failed, f"{name} is {kind}, not an nn.ModuleList")
        children = [m for m in got.modules if m.name.rpartition(".")[0] == name]
        if len(children) != count:
            held = len(children)
            extra = "fewer" if held < count else "more"
            holds = own(f"{held} modules, expected {count}", f"{extra} modules than {count}")
            return Verdict(CheckStatus.failed, f"{name} holds {holds} ({self.params.count_from})")
        first: dict[int, str] = {}
        for child in children:
            if child.instance in first:
                one, again = (module_name(n, ctx) for n in (child.name, first[child.instance]))
                return Verdict(
                    CheckStatus.failed,
                    f"{one} is the same module as {again}: build a new head for each slot "
                    "(`[head] * n` repeats one module)",
                )
            first[child.instance] = child.name
        owners: dict[int, str] = {}
        for p in got.params:
            head = head_of(p.name, name)
            if head is None:
                continue
            other = owners.setdefault(p.storage, head)
            if other != head:
                one, two, param = (module_name(n, ctx) for n in (other, head, p.name))
                return Verdict(CheckStatus.failed, f"{one} and {two} share the tensor of {param}")
        return passed(f"{count} distinct heads in {name}")


def module_name(name: str, ctx: Context) -> str:
    """A submodule's or parameter's name as the candidate may see it (`own_name`)."""
    return own_name(name, ctx.names, "one of another name")


def head_of(param: str, container: str) -> str | None:
    """`heads.2` for `heads.2.W_query.weight` when the container is `heads`."""
    prefix = container + "."
    if not param.startswith(prefix):
        return None
    return prefix + param[len(prefix) :].split(".")[0]
