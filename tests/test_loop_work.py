"""The loop check counts work wherever it is done: at torch's dispatcher, below the C callables
and callbacks that call torch; values handed out of torch count as the loop they hide; and no
softmax may hold more than one head's weights where the heads must be looped over. Each attack
keeps every other check's points and loses the loop check's, beside a correct control that
keeps full marks."""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from grader.grade import Grader
from grader.reports.models import CheckStatus
from sandbox.counter import Counting
from tests.conftest import ROOT
from tests.runtime_attacks import HOSTILE

# name -> (problem, a word of the loop check's message)
ATTACKS = {
    # each head in turn in NumPy, inside an autograd Function
    "red10_a01_numpy_function_p5": ("multi_head_attention", "values out of torch"),
    # each head a torch call made by map, run by Tensor.apply_ calling a C callable
    "red10_a02_apply_map_p5": ("multi_head_attention", "values out of torch"),
    # every head at once in each iteration, beside a larger softmax of its own
    "red10_a03_decoy_softmax_p11": ("mha_by_loop", "more than one head in one softmax"),
    # each head in turn in a forked process, inside an autograd Function, beside a decoy
    "red11_fork_loop_p5": ("multi_head_attention", "in another thread or process"),
}


def test_work_done_anywhere_fails_the_loop_check(make_grader: Callable[..., Grader]) -> None:
    grader = make_grader(["multi_head_attention", "mha_by_loop"])
    paths = [HOSTILE / name for name in ATTACKS] + [ROOT / "submissions" / "complete"]
    reports = {r.submission: r for r in grader.grade_many(paths, jobs=2)}
    control = reports["complete"]
    assert control.total == control.max_total, [p.message for p in control.problems]
    for name, (problem, word) in ATTACKS.items():
        result = reports[name].problem(problem)
        loop = [c for c in result.checks if c.check == "python_loop"]
        assert loop and loop[0].status is CheckStatus.failed, (name, loop)
        assert word in loop[0].message, (name, loop[0].message)
        others = [c for c in result.checks if c.check != "python_loop"]
        assert all(c.status is CheckStatus.passed for c in others), (name, others)


def test_the_counter_sees_torch_called_by_c_code_in_a_callback() -> None:
    """Four products made by map inside Tensor.apply_'s C callable: torch's function layer has
    the counter off its stack there, its dispatcher does not; the callback is values leaving."""
    heads = [torch.randn(2, 3, 3) for _ in range(4)]
    done: list[torch.Tensor] = []
    with Counting() as counting:
        steps = map(done.append, map(torch.matmul, heads, heads))
        torch.zeros(1).apply_(functools.partial(sum, map(bool, steps)))
    assert len(done) == 4
    assert counting.counted["products"] == 4
    assert counting.counted["left"] == 1
