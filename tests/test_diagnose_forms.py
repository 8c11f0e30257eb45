"""Every diagnosis form, without a mistake, computes what the problem's reference computes; and
every mistake a spec lists changes that output on the spec's first config."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from grader.courses.catalog import Catalog, Problem
from grader.specs.problem import Config
from grader.verdict import diagnose

PROBLEMS = ["self_attention", "causal_attention", "mha_wrapper", "multi_head_attention"]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog()


def run_form(
    problem: Problem, config: Config, knobs: diagnose.Knobs, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """(the form's output, the reference module's output) on one config's shapes."""
    assert problem.spec.diagnosis is not None and config.init is not None
    torch.manual_seed(0)
    module = problem.reference()[problem.spec.symbol](**config.init).to(dtype).eval()
    x = torch.randn(*config.args[0].shape, dtype=dtype)  # type: ignore[union-attr]
    params: dict[str, Any] = dict(problem.spec.diagnosis.params)
    source = params.pop("heads_from", None)
    if source is not None:
        params["heads"] = int(config.init[source.partition(".")[2]])
    weights = {name: p.detach() for name, p in module.named_parameters()}
    got = diagnose.compute(
        diagnose.FORMS[problem.spec.diagnosis.form], weights, [x], {}, params, knobs
    )
    with torch.no_grad():
        return got[0], module(x)


@pytest.mark.parametrize("problem_id", PROBLEMS)
def test_form_without_mistake_is_the_reference(catalog: Catalog, problem_id: str) -> None:
    problem = catalog.problems[problem_id]
    for config in problem.spec.configs:
        for dtype in (torch.float32, torch.float64):
            got, want = run_form(problem, config, diagnose.Knobs(), dtype)
            atol = 1e-6 if dtype == torch.float32 else 1e-12
            torch.testing.assert_close(got, want, atol=atol, rtol=1e-5, msg=config.id)


@pytest.mark.parametrize("problem_id", PROBLEMS)
def test_every_listed_mistake_changes_the_output(catalog: Catalog, problem_id: str) -> None:
    problem = catalog.problems[problem_id]
    assert problem.spec.diagnosis is not None
    config = problem.spec.configs[0]
    for mistake, knobs in diagnose.variants(problem.spec.diagnosis.mistakes):
        got, want = run_form(problem, config, knobs, torch.float64)
        assert not diagnose.close(got, want, 1e-5, 1e-4), f"{mistake} {knobs} is the reference"
