"""Whatever a candidate's code returns is judged as the candidate's failure, saying what came
back; only faults of the grader are grader errors."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable

import pytest
import torch

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.models import CheckStatus, ProblemStatus, SubmissionReport
from grader.sandboxing.results import ProbeData, ProbeResult, ProblemExit, ProblemRun
from grader.verdict.checks.scope import Sources
from grader.verdict.judge import judge_problem
from grader.verdict.prepare import Prepared, prepare
from tests.conftest import ROOT

ODD = ROOT / "tests" / "odd_outputs"
PROBLEMS = [
    "causal_self_attention",
    "mha_by_loop",
    "split_heads",
    "mha_with_weights",
    "fused_qkv_attention",
]

MODULE = {"output_shape", "allclose", "causality", "mask_buffer", "dropout", "gradients"}
VALUES = MODULE - {"mask_buffer"}  # a tensor of the wrong shape still shows the buffer works
LOOP = {"output_shape", "allclose", "causality", "gradients"}
WEIGHTS = {
    "output_shape",
    "allclose",
    "weights_sum_to_one",
    "mask_respected",
    "masked_keys_ignored",
}
PAIR = WEIGHTS | {"dropout", "gradients"}
NONFINITE = {"allclose", "causality", "dropout"}
SPLIT = {"output_shape", "allclose"}  # of the checks named for split_heads
MERGE = {"allclose", "contiguous"}  # of the checks named for merge_heads
RANK1, RANK3, RANK4 = r"\(\d+\)", r"\(\d+(, \d+){2}\)", r"\(\d+(, \d+){3}\)"

# (case, problem): the kinds of the checks that must fail (of those whose names hold the
# given words), and a pattern their messages match
EXPECTED: dict[tuple[str, str], tuple[set[str], str, str]] = {
    ("zero_dim", "causal_self_attention"): (MODULE, "", "returned a 0-d int64 tensor, expected a"),
    ("zero_dim", "mha_by_loop"): (LOOP, "", "returned a 0-d float"),
    ("bool_tensor", "causal_self_attention"): (MODULE, "", "bool tensor, expected"),
    ("bool_tensor", "split_heads"): (SPLIT, "split_heads", "bool tensor, expected"),
    ("int_tensor", "causal_self_attention"): (MODULE, "", "int64 tensor, expected"),
    ("int_tensor", "mha_with_weights"): (WEIGHTS, "", "output 1 is a .* int64 tensor"),
    ("tuple_output", "causal_self_attention"): (MODULE, "", r"returned a tuple of 2 \(a "),
    ("tuple_output", "mha_by_loop"): (LOOP, "", r"returned a list of \d+ \(a "),
    ("tuple_output", "fused_qkv_attention"): (PAIR, "", "returned a tuple of 3 .* a tuple of 2"),
    ("wrong_rank", "causal_self_attention"): (VALUES, "", f"returned a {RANK1} float"),
    ("wrong_rank", "split_heads"): ({"allclose"}, "merge_heads", f"returned a {RANK4} float"),
    ("nan_inf", "causal_self_attention"): (NONFINITE, "", "NaN and inf"),
    ("nan_inf", "mha_with_weights"): (WEIGHTS - {"output_shape"}, "", "(?i)nan"),
    ("none", "causal_self_attention"): (MODULE, "", "returned None, expected a"),
    ("none", "split_heads"): (MERGE, "merge_heads", "returned None, expected a"),
    ("nested_list", "causal_self_attention"): (MODULE, "", r"returned a list of 2 \(a list \[\["),
    ("nested_list", "mha_by_loop"): (LOOP, "", r"returned a list of 1 \(a list \[\[\[\["),
    ("empty_tuple", "causal_self_attention"): (MODULE, "", "returned an empty tuple"),
    ("many_outputs", "causal_self_attention"): (MODULE, "", r"returned a tuple of \d\d \(a "),
    ("complex_tensor", "causal_self_attention"): (MODULE, "", r"complex\d+ tensor, expected"),
    ("sparse_tensor", "causal_self_attention"): (VALUES, "", "that is not a dense tensor"),
    ("one_tuple", "split_heads"): (SPLIT | MERGE, "", r"returned a (tuple|list) of 1 \(a "),
    ("weights_wrong_shape", "mha_with_weights"): (WEIGHTS, "", f"output 1 is a {RANK3} float"),
    ("weights_wrong_shape", "fused_qkv_attention"): (WEIGHTS, "", f"output 1 is a {RANK4} float"),
    ("single_tensor", "mha_with_weights"): (PAIR, "", "tensor, expected a tuple of 2"),
    ("single_tensor", "fused_qkv_attention"): (PAIR, "", r"returned a tuple of 1 \(a "),
}


@pytest.fixture(scope="module")
def reports(
    make_grader: Callable[..., Grader], catalog: Catalog, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, SubmissionReport]:
    """Every odd case and the reference solutions, graded in one batch."""
    reference = tmp_path_factory.mktemp("odd") / "reference"
    reference.mkdir()
    for problem in PROBLEMS:
        found = catalog.problems[problem]
        shutil.copyfile(found.reference_file, reference / found.spec.entry)
    folders = [*sorted({ODD / case for case, _ in EXPECTED}), reference]
    graded = make_grader(PROBLEMS).grade_many(folders, jobs=2)
    return {report.submission: report for report in graded}


def test_no_odd_output_is_a_grader_error(reports: dict[str, SubmissionReport]) -> None:
    for name, report in reports.items():
        assert not report.grader_fault, (name, report.message)
        for problem in report.problems:
            assert problem.status is not ProblemStatus.grader_error, (name, problem.message)


def test_the_reference_in_the_batch_scores_full_marks(
    reports: dict[str, SubmissionReport],
) -> None:
    for problem in reports["reference"].problems:
        lost = [(c.name, c.message) for c in problem.checks if c.points < c.max_points]
        assert problem.score == problem.max_score, (problem.problem, lost)


@pytest.mark.parametrize(("case", "problem"), sorted(EXPECTED))
def test_checks_that_need_the_output_fail_saying_what_came_back(
    reports: dict[str, SubmissionReport], case: str, problem: str
) -> None:
    kinds, named, pattern = EXPECTED[case, problem]
    result = reports[case].problem(problem)
    assert result.status is ProblemStatus.graded, result.message
    needing = [c for c in result.checks if c.check in kinds and named in c.name]
    assert {c.check for c in needing} == kinds
    for check in needing:
        assert check.status in (CheckStatus.failed, CheckStatus.error), (check.name, check.message)
        assert re.search(pattern, check.message), (check.name, check.message)


def forged_runs(prepared: Prepared) -> dict[str, ProblemRun]:
    """Worker output a candidate could forge: no calls at all, or tensors unlike their notes."""
    ended = ProblemExit(exit_code=0, signal=None, timed_out=False, seconds=1.0)
    empty, unlike = ProblemRun("p", ended, imported=True), ProblemRun("p", ended, imported=True)
    for probe_id, reference in prepared.reference.items():
        data = ProbeData(id=probe_id, error=None, inspect=None, load=None, calls=[], policy=[])
        empty.probes[probe_id] = ProbeResult(data, {})
        scalars = {key: torch.tensor(0.0) for key in reference.tensors}
        unlike.probes[probe_id] = ProbeResult(reference.data, scalars)
    return {"no calls": empty, "tensors unlike their notes": unlike}


def test_forged_worker_output_is_malformed_not_a_grader_error(catalog: Catalog) -> None:
    problem = "causal_self_attention"
    prepared = prepare(catalog.select([problem]), 0, catalog.reference_source())[problem]
    source = prepared.problem.reference_file.read_bytes()
    for forgery, run in forged_runs(prepared).items():
        report = judge_problem(prepared, run, Sources({prepared.problem.spec.entry: source}))
        assert report.status is ProblemStatus.graded, (forgery, report.message)
        assert any("output was malformed" in c.message for c in report.checks), forgery
        assert report.score < report.max_score, forgery


def test_every_case_folder_is_expected() -> None:
    assert {p.name for p in ODD.iterdir()} == {case for case, _ in EXPECTED}
