"""Attacks the sandbox's run-time layers answer (the policy guard, the loop's behaviour), each
with the check it fails and a word of that check's message (the instructor's view)."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.reports.models import CheckStatus, ProblemStatus, SubmissionReport
from grader.sandboxing.results import REFUSED
from tests.conftest import ROOT

HOSTILE = ROOT / "tests" / "hostile"
# name -> (problem, check, a word of its message, whether the refusal cost the values)
RUNTIME_ATTACKS = {
    "runtime_private_sdpa": ("causal_self_attention", "forbidden_api", "torch.ops", True),
    "runtime_module_mha": ("fused_qkv_attention", "forbidden_api", "MultiheadAttention", True),
    "runtime_refusal_caught": (
        "causal_attention",
        "forbidden_api",
        "aten::scaled_dot_product_attention was called at run time (refused)",
        False,
    ),
    "loop_in_nested_def": (
        "multi_head_attention",
        "python_loop",
        "runs other torch operations with other head counts",
        False,
    ),
    "loop_in_map_lambda": (
        "multi_head_attention",
        "python_loop",
        "runs other torch operations with other head counts",
        False,
    ),
    "loop_range_one": ("mha_by_loop", "python_loop", "does not do more attention work", False),
    # a non-contiguous output in a tensor subclass whose `is_contiguous` says it is
    "claims_contiguous": ("split_heads", "contiguous", "output 0 is not contiguous", False),
}


def assert_caught(name: str, report: SubmissionReport) -> None:
    """The attack fails its check with its word; a refusal that was not caught cost the values
    (a value check failed because the call raised `Refused`)."""
    problem, check, word, costly = RUNTIME_ATTACKS[name]
    result = report.problem(problem)
    found = [c for c in result.checks if c.check == check]
    assert found and found[0].status is CheckStatus.failed, (name, found)
    assert word in found[0].message, (name, found[0].message)
    assert not report.grader_fault, (name, report)
    if costly:
        raised = [c.name for c in result.checks if REFUSED in c.message]
        assert raised, (name, [c.message for c in result.checks])


# A red team's attacks, written against the design without its tests: name -> (problem, what
# it must not achieve). "forbidden": its marker (printed only once a forbidden kernel gave the
# values) never appears and the problem loses points; "loop": the loop check fails; "leak":
# the hidden values it looked for never reach its output; "vacuous": no causality check passes.
RED_TEAM = {
    "red_a01_pydoc_sdpa": ("multi_head_attention", "forbidden"),
    "red_a02_timeit_mha": ("multi_head_self_attention", "forbidden"),
    "red_a03_doctest_mha": ("mha_with_weights", "forbidden"),
    "red_a04_formatter_sdpa": ("causal_self_attention", "forbidden"),
    "red_a05_getmodule_p11": ("mha_by_loop", "forbidden"),
    "red_a06_torchload_hidden": ("fused_qkv_attention", "forbidden"),
    "red_a07_logging_hidden": ("causal_attention", "forbidden"),
    "red_a08_shadow_tabulate": ("self_attention", "forbidden"),
    "red_a09_flex_hop": ("mha_wrapper", "forbidden"),
    "red_b01_thread_loop_p5": ("multi_head_attention", "loop"),
    "red_b02_padded_loop_p5": ("multi_head_attention", "loop"),
    "red_b03_dummy_work_p11": ("mha_by_loop", "loop"),
    "red_b04_forge_count_p11": ("mha_by_loop", "loop"),
    "red_b05_disable_tf_p5": ("multi_head_attention", "loop"),
    "red_b06_rewrite_results_p5": ("multi_head_attention", "loop"),
    "red_d01_leak_maxerror": ("self_attention", "leak"),
    # a second round, against the guard's first form: its state reached through the frames
    # bdb and asyncio hand out, torch's globals, the ONNX attention op, a lattice of bases
    "red2_a01_bdb_sdpa": ("self_attention", "forbidden"),
    "red2_a02_asyncio_sdpa": ("self_attention", "forbidden"),
    "red2_a03_counter_p5": ("multi_head_attention", "loop"),
    "red2_a04_counter_p11": ("mha_by_loop", "loop"),
    "red2_a05_leak_hidden": ("mha_with_weights", "leak"),
    "red2_a06_native_mha": ("multi_head_self_attention", "forbidden"),
    "red2_a07_mro_lattice": ("multi_head_attention", "full"),
    "red2_a08_globals_disable_counter": ("multi_head_attention", "loop"),
    "red2_a09_onnx_attention": ("self_attention", "forbidden"),
    # a third round: SDPA under torch.vmap, whose batching rule is a kernel on a key of its own
    "red3_a01_vmap_sdpa": ("causal_self_attention", "forbidden"),
    # and its loop over the heads in a callback of Tensor.apply_, which torch runs unseen
    "red3_a02_apply_loop_p5": ("multi_head_attention", "loop"),
    # a batched computation beside a loop of dummy products and softmaxes, one per head
    "red3_a03_dummy_loop_p11": ("mha_by_loop", "loop"),
    # a fifth round: ONNX's attention as torch hands out its undecorated original, in the table
    # of its decompositions (`torch.onnx.ops.aten_decompositions()`)
    "red5_a01_onnx_decomposition": ("causal_self_attention", "forbidden"),
    # a sixth: all heads' softmax at once in a view that folds them into rows (not square),
    # beside a loop of dummy products and softmaxes, one per head
    "red6_a01_batched_softmax_rows_p11": ("mha_by_loop", "loop"),
    # the same, written with torch.special.softmax (a reviewer's)
    "red6_a02_special_softmax_rows_p11": ("mha_by_loop", "loop"),
    # a ninth: no attention at all, zeros of the right shape: causal, blind to masked keys and
    # the same on both paths, since nothing depends on anything
    "red9_a03_null_module": ("causal_self_attention", "vacuous"),
    # a tenth, against counting at torch's function layer: each head in NumPy inside an autograd
    # Function, each a torch call that C code makes inside Tensor.apply_, and every head at once
    # in each iteration beside one larger softmax (tests/test_loop_work.py)
    "red10_a01_numpy_function_p5": ("multi_head_attention", "loop"),
    "red10_a02_apply_map_p5": ("multi_head_attention", "loop"),
    "red10_a03_decoy_softmax_p11": ("mha_by_loop", "loop"),
}
MARKERS = {"forbidden": "computed", "leak": "first values"}
VACUOUS = {"causality": 6, "masked_keys_ignored": 2, "paths_agree": 1}  # checks in the course
# Honest code the red team wrote to find false failures, full marks on every problem: SDPA per
# head where allowed, sys.path, a flash helper shared by name, doctest, timeit, a coding
# cookie, torch.jit.script, a `__main__` self-test against SDPA (and a function only it calls),
# a package of helpers, a single-head shortcut, traceback.print_exc, singledispatch on string
# annotations, typing's generic aliases, checkpointing, pytest and unittest tests against SDPA,
# torch.nn.init's fan-in helper. Each is the complete submission with the files of
# `honest/<name>` over it.
HONEST = sorted(path.name for path in (HOSTILE / "honest").iterdir())


def honest_submissions(root: Path) -> list[Path]:
    """The honest submissions, assembled under `root` as `honest_<name>`."""
    made = []
    for name in HONEST:
        target = root / f"honest_{name}"
        shutil.copytree(ROOT / "submissions" / "complete", target)
        shutil.copytree(HOSTILE / "honest" / name, target, dirs_exist_ok=True)
        made.append(target)
    return made


def assert_held(name: str, report: SubmissionReport) -> None:
    """The red team's attack gained nothing it was after."""
    problem, goal = RED_TEAM[name]
    result = report.problem(problem)
    assert not report.grader_fault, (name, report.message)
    if goal == "full":  # code that is correct, shaped to exhaust the host's reading of it
        assert result.score == result.max_score, (name, result.message)
        return
    if goal == "vacuous":  # an output that shows nothing earns no check of what it would show
        found = [c for p in report.problems for c in p.checks if c.check in VACUOUS]
        counts = {check: sum(c.check == check for c in found) for check in VACUOUS}
        assert counts == VACUOUS and all(c.status is CheckStatus.failed for c in found), found
        return
    if goal == "loop":  # the loop check fails, or the means are tampering and score 0
        found = [c for c in result.checks if c.check == "python_loop"]
        failed = found and found[0].status is not CheckStatus.passed
        assert failed or result.status is ProblemStatus.forbidden_api, (name, found)
        return
    assert MARKERS[goal] not in result.stdout, (name, result.stdout[-500:])
    if goal == "forbidden":
        assert result.score < result.max_score, (name, result.status, result.message)


def assert_full(report: SubmissionReport) -> None:
    """Full marks, or the checks that failed."""
    failed = [
        (p.problem, c.check, c.message)
        for p in report.problems
        for c in p.checks
        if c.status is not CheckStatus.passed
    ]
    assert report.total == report.max_total, (report.submission, report.message, failed)
