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
    "loop_in_assert": ("mha_by_loop", "python_loop", "no Python loop"),
    "loop_in_helper": ("multi_head_attention", "python_loop", "in heads"),
}
