"""The diagnosis forms of the weight-returning, fused and flash problems: without a mistake
they compute every output the reference computes (weights and masks included, both paths of
`flash_attention`), and every listed mistake changes some output."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from grader.courses.catalog import Catalog, Problem
from grader.specs.problem import Config
from grader.verdict import diagnose
from grader.verdict.plan import make_mask

PROBLEMS = [
    "multi_head_self_attention",
    "mha_with_weights",
    "fused_qkv_attention",
    "flash_attention",
]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog()


def run_form(
    problem: Problem,
    config: Config,
    knobs: diagnose.Knobs,
    dtype: torch.dtype,
    setup: dict[str, Any] | None = None,
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """(the form's outputs, the reference module's outputs) on one config, in eval mode."""
    assert problem.spec.diagnosis is not None and config.init is not None
    torch.manual_seed(0)
    module = problem.reference()[problem.spec.symbol](**config.init).to(dtype).eval()
    for name, value in (setup or {}).items():
        setattr(module, name, value)
    x = torch.randn(*config.args[0].shape, dtype=dtype)  # type: ignore[union-attr]
    kwargs = {} if config.mask is None else {"mask": make_mask(config)}
    params: dict[str, Any] = dict(problem.spec.diagnosis.params)
    source = params.pop("heads_from", None)
    if source is not None:
        params["heads"] = int(config.init[source.partition(".")[2]])
    weights = {name: p.detach() for name, p in module.named_parameters()}
    got = diagnose.compute(
        diagnose.FORMS[problem.spec.diagnosis.form], weights, [x], kwargs, params, knobs
    )
    with torch.no_grad():
        out = module(x, **kwargs)
    return got, list(out) if isinstance(out, tuple) else [out]


def value_configs(problem: Problem) -> list[Config]:
    return [c for c in problem.spec.configs if c.init is not None]


@pytest.mark.parametrize("problem_id", PROBLEMS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_form_without_mistake_is_the_reference(
    catalog: Catalog, problem_id: str, dtype: torch.dtype
) -> None:
    problem = catalog.problems[problem_id]
    setups: list[dict[str, Any] | None] = [None]
    if problem_id == "flash_attention":
        setups.append({"flash": False})
    atol = 1e-6 if dtype == torch.float32 else 1e-12
    for config in value_configs(problem):
        for setup in setups:
            got, want = run_form(problem, config, diagnose.Knobs(), dtype, setup)
            assert len(got) == len(want), config.id
            for g, w in zip(got, want, strict=True):
                torch.testing.assert_close(g, w, atol=atol, rtol=1e-5, msg=f"{config.id} {setup}")


@pytest.mark.parametrize("problem_id", PROBLEMS)
def test_every_listed_mistake_changes_an_output(catalog: Catalog, problem_id: str) -> None:
    problem = catalog.problems[problem_id]
    assert problem.spec.diagnosis is not None
    masked = [c for c in value_configs(problem) if c.mask == "padding"]
    config = masked[0] if masked else value_configs(problem)[0]
    for mistake, knobs in diagnose.variants(problem.spec.diagnosis.mistakes):
        got, want = run_form(problem, config, knobs, torch.float64)
        same = all(diagnose.close(g, w, 1e-5, 1e-4) for g, w in zip(got, want, strict=True))
        assert not same, f"{mistake} {knobs} is the reference on {config.id}"
