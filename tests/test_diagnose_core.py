"""The diagnosis forms of the first three problems reproduce their references exactly, and
every mistake a spec declares gives a different output."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import torch

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.models import CheckStatus
from grader.verdict import diagnose
from tests.conftest import ROOT

CATALOG = Catalog()


def test_split_heads_form_is_the_reference() -> None:
    ref = CATALOG.problems["split_heads"].reference()
    x = torch.randn(2, 5, 12)
    split = diagnose.compute(diagnose.FORMS["split_heads"], {}, [x, 3], {}, {}, diagnose.Knobs())[0]
    assert torch.equal(split, ref["split_heads"](x, 3))
    params = {"function": "merge_heads"}
    merged = diagnose.compute(
        diagnose.FORMS["split_heads"], {}, [split], {}, params, diagnose.Knobs()
    )[0]
    assert torch.equal(merged, ref["merge_heads"](split))


def test_fused_form_is_the_reference_and_mistakes_differ() -> None:
    ref = CATALOG.problems["causal_self_attention"].reference()
    torch.manual_seed(0)
    module = ref["CausalSelfAttention"](n_embd=24, n_head=3, block_size=6).eval()
    weights = dict(module.state_dict())
    weights.pop("mask")
    x = torch.randn(2, 5, 24)
    params = {"heads": 3, "causal": True}
    none = diagnose.compute(diagnose.FORMS["fused"], weights, [x], {}, params, diagnose.Knobs())[0]
    assert torch.allclose(none, module(x), atol=1e-6)
    declared = CATALOG.problems["causal_self_attention"].spec.diagnosis
    assert declared is not None
    for mistake, knobs in diagnose.variants(declared.mistakes):
        out = diagnose.compute(diagnose.FORMS["fused"], weights, [x], {}, params, knobs)[0]
        assert not diagnose.close(out, none, 1e-5, 1e-4), mistake


def test_a_causality_failure_names_the_mistake_that_mixes_tokens(
    make_grader: Callable[..., Grader], tmp_path: Path
) -> None:
    """Heads split with view and no transpose move values across positions: the causal check
    fails with the mask right, and says which named mistake is the likely cause."""
    root = tmp_path / "split_by_view"
    root.mkdir()
    mutant = ROOT / "problems" / "multi_head_attention" / "mutants" / "view_no_transpose.py"
    shutil.copy(mutant, root / "multi_head_attention.py")
    report = make_grader(["multi_head_attention"]).grade_many([root], jobs=1)[0]
    causal = next(
        c for c in report.problem("multi_head_attention").checks if c.check == "causality"
    )
    assert causal.status is CheckStatus.failed
    assert causal.message.endswith(
        f"(here, likely the named mistake {diagnose.MISTAKES['view_no_transpose']!r}, "
        "which mixes tokens)"
    ), causal.message


def test_a_mask_mistake_is_named_on_every_config_it_explains(
    make_grader: Callable[..., Grader], tmp_path: Path
) -> None:
    """`masked_fill(mask == 0, -1e9)` reads True as "may attend": where that blocks a whole row
    the row is uniform, not NaN, and the mistake is still named there, on every masked config
    and not on the first only."""
    root = tmp_path / "mask_inverted"
    root.mkdir()
    mutant = ROOT / "problems" / "mha_with_weights" / "mutants" / "mask_inverted.py"
    shutil.copy(mutant, root / "mha_with_weights.py")
    report = make_grader(["mha_with_weights"]).grade_many([root], jobs=1)[0]
    masked = next(
        c
        for c in report.problem("mha_with_weights").checks
        if c.name == "honours padding, per-head and causal masks"
    )
    lines = masked.message.splitlines()
    assert masked.status is CheckStatus.failed and len(lines) == 3, masked.message
    named = f"It matches a known mistake: {diagnose.MISTAKES['mask_semantics_inverted']}"
    assert all(line.endswith(named) for line in lines), masked.message
