"""A check without a result says why: a reason the judge decides from, and its message."""

from __future__ import annotations

import pytest

from grader.sandboxing.results import ProblemExit, ProblemRun
from grader.specs.paths import builtin_problems
from grader.specs.problem import load_spec
from grader.verdict.missing import Missing, missing_text, why_missing


def ended(code: int | None = 0, signal: int | None = None, timed_out: bool = False) -> ProblemExit:
    return ProblemExit(exit_code=code, signal=signal, timed_out=timed_out, seconds=1.0)


@pytest.mark.parametrize(
    ("run", "reason", "said"),
    [
        (ProblemRun("p", None), Missing.not_started, "ended before this problem ran"),
        (ProblemRun("p", ended(None, timed_out=True)), Missing.timed_out, "was stopped after 1 s"),
        (ProblemRun("p", ended(None, 9)), Missing.killed, "killed by signal 9 SIGKILL during"),
        (ProblemRun("p", ended(3)), Missing.exited, "exited with code 3"),
        (ProblemRun("p", ended(), invalid=["p0.json: bad"]), Missing.rejected, "malformed: p0"),
        (ProblemRun("p", ended()), Missing.vanished, "ended without a result"),
    ],
)
def test_a_missing_result_says_why(run: ProblemRun, reason: Missing, said: str) -> None:
    spec = load_spec(builtin_problems() / "split_heads" / "spec.toml")
    assert why_missing(run) is reason
    assert said in missing_text(reason, run, spec, {})
