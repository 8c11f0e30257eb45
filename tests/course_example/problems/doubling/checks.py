"""This problem's own check: the output is twice the input, judged on the host."""

from grader.reports.models import CheckStatus
from grader.verdict.checks import Check, Context, Verdict, register
from grader.verdict.checks.base import ConfigParams, about
from grader.verdict.plan import Plan


@register("twice_the_input")
class TwiceTheInput(Check[ConfigParams]):
    def prepare(self, plan: Plan) -> None:
        self.probes = {c.id: plan.call_probe(c) for c in self.configs()}
        self.inputs = {c.id: plan.args(c)[0]["tensor"] for c in self.configs()}
        self.tensors = plan.tensors

    def judge(self, ctx: Context) -> Verdict:
        for config_id, probe in self.probes.items():
            with about(self.problem.config(config_id)):
                got = ctx.output(probe)
            if not bool((got == 2 * self.tensors[self.inputs[config_id]]).all()):
                return Verdict(CheckStatus.failed, f"config {config_id}: not twice the input")
        return Verdict(CheckStatus.passed, "twice the input")
