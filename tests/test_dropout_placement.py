"""Where dropout acts, read at T = 1: whole heads for dropout on the attention weights, single
channels for dropout on the context vectors or the output, and the blame for a parameter mistake
on the parameters."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.specs.paths import builtin_problems, builtin_references
from grader.verdict.checks.base import config_text
from grader.verdict.checks.placement import placement_fault, ratios

P = 0.5
BATCH, HEADS, HEAD_DIM = 8, 4, 4


def one_token(drop: set[str], projection: bool, resid: bool = False, seed: int = 0) -> str | None:
    """Attention at T = 1 with dropout on what `drop` names (weights, context, output), judged
    as the dropout check does for a contract with a projection and, if `resid`, dropout after
    it."""
    width = HEADS * HEAD_DIM
    generator = torch.Generator().manual_seed(seed)
    v = torch.randn(BATCH, HEADS, HEAD_DIM, generator=generator, dtype=torch.float64)
    one_hot = (torch.arange(width) % BATCH == torch.arange(BATCH)[:, None]).double()

    def run(train: bool) -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(seed)
        weight = torch.ones(BATCH, HEADS, 1, dtype=torch.float64)  # softmax over one key
        if train and "weights" in drop:
            weight = F.dropout(weight, P)
        context = (weight * v).flatten(1)  # (B, C)
        if train and "context" in drop:
            context = F.dropout(context, P)
        proj = torch.eye(width, dtype=torch.float64, requires_grad=True)
        out = context @ proj.T
        if train and "output" in drop:
            out = F.dropout(out, P)
        out.backward(one_hot)
        assert proj.grad is not None
        return out.detach(), proj.grad

    (out_eval, grad_eval), (out_train, grad_train) = run(False), run(True)
    context = ratios(grad_train, grad_eval, HEADS) if projection else None
    return placement_fault(
        ratios(out_train, out_eval, HEADS), context, P, resid, "proj" if projection else None
    )


@pytest.mark.parametrize("projection", [False, True])
def test_dropout_on_the_weights_passes(projection: bool) -> None:
    assert one_token({"weights"}, projection) is None


def test_weights_and_the_residual_pass() -> None:
    assert one_token({"weights", "output"}, projection=True, resid=True) is None


@pytest.mark.parametrize(
    ("drop", "projection", "resid", "named"),
    [
        ({"context"}, False, False, "acts on the context vectors"),
        ({"context"}, True, False, "context vector (the input of proj)"),
        ({"context", "output"}, True, True, "context vector (the input of proj)"),
        ({"output"}, True, False, "where it dropped no head: it acts on the output of proj"),
        ({"weights", "output"}, True, False, "where it dropped whole heads: a second dropout"),
        ({"output"}, True, True, "only the output is dropped"),
        ({"weights"}, True, True, "then resid_dropout on the output"),
        (set(), True, False, "does not act on the attention weights after the softmax"),
    ],
)
def test_misplaced_dropout_is_named(
    drop: set[str], projection: bool, resid: bool, named: str
) -> None:
    for seed in range(5):
        fault = one_token(drop, projection, resid, seed)
        assert fault is not None and named in fault, (seed, fault)


def test_dropout_on_the_weights_and_the_output_is_told_both(
    tmp_path: Path, make_grader: Callable[..., Grader]
) -> None:
    """A module that drops whole heads at the weights and also drops its output is told that
    it dropped whole heads and a second dropout acts on the output, not that every head
    reached out_proj whole or that nothing acts on the attention weights."""
    mutant = builtin_problems() / "multi_head_attention" / "mutants" / "dropout_on_output.py"
    source = mutant.read_text()
    both = source.replace(
        "attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)\n",
        "attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)\n"
        "        attn_weights = self.dropout(attn_weights)\n",
    )
    assert both != source
    (tmp_path / "multi_head_attention.py").write_text(both)
    report = make_grader(["multi_head_attention"]).grade(tmp_path)
    checks = report.problem("multi_head_attention").checks
    dropout = next(c for c in checks if c.check == "dropout")
    assert dropout.status == "failed", dropout.message
    assert "where it dropped whole heads" in dropout.message, dropout.message
    assert "a second dropout acts on the output of out_proj" in dropout.message
    assert "whole, but" not in dropout.message and "not on the attention" not in dropout.message


def test_a_parameter_mistake_is_not_blamed_on_dropout(
    tmp_path: Path, make_grader: Callable[..., Grader]
) -> None:
    """An out_proj without its bias, and a W_o with one, lose the dropout point to the
    parameters: the grader could not set them, so it cannot tell where dropout acts."""
    cases = {
        "multi_head_attention": "out_proj_without_bias",
        "mha_with_weights": "out_proj_with_bias",
    }
    for problem, mutant in cases.items():
        folder = tmp_path / mutant
        folder.mkdir()
        shutil.copyfile(
            builtin_problems() / problem / "mutants" / f"{mutant}.py", folder / f"{problem}.py"
        )
        report = make_grader([problem]).grade(folder)
        dropout = next(c for c in report.problem(problem).checks if c.check == "dropout")
        assert "a parameter mistake" in dropout.message, dropout.message
        assert "dropout must" not in dropout.message


def test_a_fault_at_one_token_names_the_one_token_config(
    tmp_path: Path, make_grader: Callable[..., Grader], catalog: Catalog
) -> None:
    """`squeeze()` drops the token axis only where T = 1: the dropout check's message names the
    config whose output it shows (drop_T1), not the check's own (drop)."""
    reference = (builtin_references() / "causal_attention.py").read_text()
    squeezed = reference.replace("return att @ v  # (B, T, d_out)", "return (att @ v).squeeze()")
    assert squeezed != reference
    (tmp_path / "causal_attention.py").write_text(squeezed)
    report = make_grader(["causal_attention"]).grade(tmp_path)
    dropout = next(c for c in report.problem("causal_attention").checks if c.check == "dropout")
    spec = catalog.problems["causal_attention"].spec
    assert dropout.status == "failed", dropout.message
    assert dropout.message.startswith(config_text(spec.config("drop_T1"))), dropout.message
    assert "input (16, 1, 8)" in dropout.message and "(16, 6)" in dropout.message
