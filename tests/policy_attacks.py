"""Attacks on the policy checks, each with the check it must fail and a word of the message."""

from __future__ import annotations

from tests.conftest import ROOT

HOSTILE = ROOT / "tests" / "hostile"
# name -> (problem, check, a word the message holds)
POLICY_ATTACKS = {
    "sdpa_via_ops": ("causal_self_attention", "forbidden_api", "torch.ops"),
    "sdpa_via_self_helper": ("causal_self_attention", "forbidden_api", "as a value"),
    "sdpa_from_closure": ("causal_self_attention", "forbidden_api", "forbidden"),
    "utf7_cookie": ("causal_self_attention", "forbidden_api", "coding: utf-7"),
    "load_by_runpy": ("causal_self_attention", "forbidden_api", "runpy"),
    "load_by_spec": ("causal_self_attention", "forbidden_api", "import machinery"),
    "load_by_resolve_name": ("causal_self_attention", "forbidden_api", "pkgutil"),
    "import_from_tmp": (
        "causal_self_attention",
        "forbidden_api",
        "compiling code under the name of",
    ),
    "bom_private_sdpa": (
        "causal_self_attention",
        "forbidden_api",
        "private name torch._scaled_dot_product_attention_math",
    ),
    "private_torch_name": (
        "causal_self_attention",
        "forbidden_api",
        "private name torch._scaled_dot_product_flash_attention_for_cpu",
    ),
    "shadowed_winsound": ("causal_self_attention", "forbidden_api", "at winsound.py"),
    "deep_expression_helper": (
        "causal_self_attention",
        "forbidden_api",
        "padding.py: nested too deeply for the grader to read",
    ),
    "loop_in_assert": ("mha_by_loop", "python_loop", "does not do more attention work"),
    "loop_in_helper": ("multi_head_attention", "python_loop", "in heads"),
}
