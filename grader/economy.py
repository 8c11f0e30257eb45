"""The probe economy: what each probe of a problem finds that no other probe finds.

A check that probes several configs asks a probe for each (identical probes of several checks
are asked for once). Over what `validate` grades (the reference, the accepted solutions, the
mutants), a probe earns its time when a mutant's declared verdict needs it: taken away with the
configs that ask for it, some mutant would pass a check it must fail or lose a diagnosis it must
get. A probe is kept whatever it finds where it cannot go (it serves a check of no configs, or
the last config of a check) or where its config says what it covers (its `why`: an edge such as
T = 1, one head, a mask, which held-out mistakes may need though no mutant does). Every other
probe is tried in turn, the costliest first, and goes when every verdict validate declares
still holds without it (`redundant`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from grader.reports.models import CheckReport, CheckStatus
from grader.sandboxing.results import ProblemRun
from grader.verdict.checks import Check, Context
from grader.verdict.checks.base import ConfigParams
from grader.verdict.checks.scope import Sources
from grader.verdict.judge import check_report, judge_checks
from grader.verdict.prepare import Prepared

PROBE_ID = re.compile(r"p[0-9]+")
"""How a plan names its probes (`Plan.probe`)."""

Configs = dict[int, tuple[str, ...]]
"""Each config-taking check (by its index in the problem) with the configs it probes."""


@dataclass
class Graded:
    """One entry validate graded for a problem: its run, its files, and what its check reports
    fail to show of its declared verdict (None: a reference or accepted solution, which must
    pass every check)."""

    name: str
    run: ProblemRun
    sources: Sources
    misses: Callable[[list[CheckReport]], list[str]] | None


@dataclass
class ProbeWorth:
    """One probe: what asks for it, the reference's time on it, and what it finds."""

    probe: str
    asks: list[str]  # "check name on config", or "check name"
    seconds: float
    needed_by: list[str] = field(default_factory=list)  # entries wrong without it alone
    fixed: str = ""  # why it stays whatever it finds
    covers: str = ""  # what its config says it is for (its `why`): it stays for that
    redundant: bool = False  # it goes in the greedy pass: nothing needs it


class Economy:
    """The probes of one problem weighed against what validate graded for it."""

    def __init__(self, prepared: Prepared, graded: list[Graded]) -> None:
        self.prepared = prepared
        self.graded = graded
        checks = prepared.checks
        self.full: Configs = {}  # the checks whose probes are each one config's
        self.unit: dict[tuple[int, str], set[str]] = {}
        for i, check in enumerate(checks):
            if not isinstance(check.params, ConfigParams):
                continue
            configs = tuple(c.id for c in check.configs())
            try:
                units = {(i, c): held_probes(self.check_on(i, (c,))) for c in configs}
            except ValueError:  # a probe of several configs at once (a sweep)
                continue
            self.full[i] = configs
            self.unit.update(units)
        self.asked = {i: held_probes(check) for i, check in enumerate(checks)}
        self._verdicts: dict[tuple[int, int, tuple[str, ...]], CheckReport] = {}
        self._checks: dict[tuple[int, tuple[str, ...]], Check] = {}

    def check_on(self, index: int, configs: tuple[str, ...]) -> Check:
        """The problem's check `index` probing `configs` only, prepared on a copy of the
        problem's plan, where it finds every probe it asks for."""
        original = self.prepared.checks[index]
        params = {**original.spec.params, "configs": list(configs)}
        spec = original.spec.model_copy(update={"params": params})
        check = type(original)(spec, original.problem)
        check.diagnoses = original.diagnoses
        plan = self.prepared.plan.copy()
        count = len(plan.probes)
        check.prepare(plan)
        if len(plan.probes) != count:
            raise ValueError(f"{spec.name} on {configs} asks for a probe the plan lacks")
        return check

    def verdict(self, entry: int, index: int, configs: Configs) -> CheckReport:
        """Check `index`'s report on an entry, with `configs`."""
        probed = configs.get(index, ())
        key = (entry, index, probed)
        if key not in self._verdicts:
            graded = self.graded[entry]
            same = index not in self.full or probed == self.full[index]
            if not same and (index, probed) not in self._checks:
                self._checks[(index, probed)] = self.check_on(index, probed)
            check = self.prepared.checks[index] if same else self._checks[(index, probed)]
            prepared = self.prepared
            ctx = Context(
                prepared.problem.spec, prepared.plan, graded.run, prepared.reference, graded.sources
            )
            verdicts, _ = judge_checks([check], ctx)
            self._verdicts[key] = check_report(check, verdicts[0], zeroed=False)
        return self._verdicts[key]

    def wrong(self, configs: Configs) -> set[str]:
        """The entries whose declared verdict does not hold with these configs."""
        wrong = set()
        for entry, graded in enumerate(self.graded):
            reports = [self.verdict(entry, i, configs) for i in range(len(self.asked))]
            if graded.misses is None:
                failed = any(r.status is not CheckStatus.passed for r in reports)
            else:
                failed = bool(graded.misses(reports))
            if failed:
                wrong.add(graded.name)
        return wrong

    def without(self, configs: Configs, probe: str) -> Configs | str:
        """`configs` less every config whose probes include `probe`, or why it cannot go."""
        users = [i for i, asked in self.asked.items() if probe in asked]
        fixed = [self.prepared.checks[i].spec.name for i in users if i not in self.full]
        if fixed:
            return f"asked for by {fixed[0]!r} whatever its configs"
        reduced = dict(configs)
        for i in users:
            kept = tuple(c for c in configs[i] if probe not in self.unit[(i, c)])
            if not kept:
                return f"the last config of {self.prepared.checks[i].spec.name!r}"
            reduced[i] = kept
        return reduced

    def weigh(self) -> list[ProbeWorth]:
        """Every probe's worth, and the greedy pass that drops, the costliest first, each probe
        whose going leaves every declared verdict as it was."""
        worth = {
            p: ProbeWorth(p, self.asks(p), self.seconds(p), covers=self.covers(p))
            for p in self.prepared.plan.probes
        }
        baseline = self.wrong(self.full)
        for probe in worth.values():
            reduced = self.without(self.full, probe.probe)
            if isinstance(reduced, str):
                probe.fixed = reduced
            else:
                probe.needed_by = sorted(self.wrong(reduced) - baseline)
        current = dict(self.full)
        for probe in sorted(worth.values(), key=lambda w: -w.seconds):
            if probe.fixed or probe.needed_by or probe.covers:
                continue
            reduced = self.without(current, probe.probe)
            if not isinstance(reduced, str) and self.wrong(reduced) <= baseline:
                current, probe.redundant = reduced, True
        return list(worth.values())

    def asks(self, probe: str) -> list[str]:
        """What asks for `probe`: each check on each config, or the check itself."""
        names = []
        for i, asked in self.asked.items():
            name = self.prepared.checks[i].spec.name
            if probe in asked and i not in self.full:
                names.append(name)
            elif probe in asked:
                names += [f"{name} on {c}" for c in self.full[i] if probe in self.unit[(i, c)]]
        return names

    def covers(self, probe: str) -> str:
        """What the configs of the units asking for `probe` say they are for (`why`)."""
        spec = self.prepared.problem.spec
        whys = {spec.config(c).why for (i, c), probes in self.unit.items() if probe in probes}
        return "; ".join(sorted(w for w in whys if w))

    def seconds(self, probe: str, runs: int = 3) -> float:
        """The reference's median time on `probe`, run on the host."""
        plan = self.prepared.plan
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            plan.source.run(plan.spec.id, plan.probes[probe], plan.tensors)
            times.append(time.perf_counter() - start)
        return sorted(times)[len(times) // 2]


def held_probes(check: Check) -> set[str]:
    """The probe ids a prepared check holds in its attributes."""
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, str) and PROBE_ID.fullmatch(value):
            found.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple | set):
            for item in value:
                walk(item)

    for name, value in vars(check).items():
        if name not in ("spec", "problem", "_params", "diagnoses"):
            walk(value)
    return found


def finds(worth: ProbeWorth) -> str:
    """What a probe finds, in words."""
    if worth.needed_by:
        return "needed by " + ", ".join(worth.needed_by)
    if worth.fixed:
        return f"kept: {worth.fixed}"
    if worth.covers:
        return f"no mutant needs it alone; kept for what its config covers: {worth.covers}"
    if worth.redundant:
        return "nothing the others do not find: it could go"
    return "what others find too, once the redundant ones are gone"


def markdown(weighed: dict[str, list[ProbeWorth]]) -> str:
    """Every problem's probes, what asks for each, the reference's time on it and what it finds."""
    lines = []
    for problem, worths in weighed.items():
        total = sum(w.seconds for w in worths)
        lines += [
            f"### {problem}",
            "",
            f"{len(worths)} probes, {total * 1000:.1f} ms of the reference's time on the host.",
            "",
            "| probe | asked by | ms | finds |",
            "| --- | --- | --- | --- |",
        ]
        for w in worths:
            asks = "; ".join(w.asks).replace("|", "\\|")
            lines.append(f"| {w.probe} | {asks} | {w.seconds * 1000:.2f} | {finds(w)} |")
        lines.append("")
    return "\n".join(lines)


def redundant(weighed: dict[str, list[ProbeWorth]]) -> list[str]:
    """A line for each probe that finds nothing the others do not."""
    return [
        f"{problem} {w.probe} ({'; '.join(w.asks)}) finds nothing the others do not: "
        "its configs could go from those checks"
        for problem, worths in weighed.items()
        for w in worths
        if w.redundant
    ]
