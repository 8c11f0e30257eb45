"""Forbidden APIs are found by any route the source shows; docstrings do not count."""

from __future__ import annotations

import ast

import pytest

from grader.checks.source import find_function, forbidden_uses

NAMES = {"scaled_dot_product_attention", "MultiheadAttention"}


@pytest.mark.parametrize(
    "source",
    [
        "import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v)",
        "from torch.nn.functional import scaled_dot_product_attention as sdpa",
        "import torch\nf = getattr(torch.nn.functional, 'scaled_dot_' + 'product_attention')",
        "import torch\nf = torch._C._nn.scaled_dot_product_attention",
        "from torch._C import _nn",
        "import torch\nm = torch.nn.MultiheadAttention(8, 2)",
        "f = eval('torch.nn.functional.sdpa')",
        "import importlib\nF = importlib.import_module('torch.nn.functional')",
        "import torch\nf = vars(torch.nn.functional)['scaled_dot_product_attention']",
        "import torch\nf = torch.nn.functional.__dict__['sdp' + 'a']",
    ],
)
def test_routes_are_found(source: str) -> None:
    assert forbidden_uses(ast.parse(source), NAMES)


def test_docstrings_and_plain_code_are_clean() -> None:
    source = '''
"""Do not use scaled_dot_product_attention here."""
import math
import torch


class Attention(torch.nn.Module):
    """Unlike MultiheadAttention, this is written by hand."""

    def forward(self, x):
        return torch.softmax(x @ x.transpose(-2, -1) / math.sqrt(x.shape[-1]), dim=-1) @ x
'''
    assert forbidden_uses(ast.parse(source), NAMES) == []


def test_find_function_in_class() -> None:
    source = "class A:\n    def forward(self):\n        for i in range(2):\n            pass\n"
    tree = ast.parse(source)
    function = find_function(tree, "A.forward")
    assert function is not None and function.name == "forward"
    assert find_function(tree, "B.forward") is None


def test_reflection_on_self_is_allowed() -> None:
    source = (
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        for i in range(2):\n"
        "            setattr(self, f'head_{i}', torch.nn.Linear(2, 2))\n"
        "    def forward(self, x):\n"
        "        return sum(getattr(self, f'head_{i}')(x) for i in range(2))\n"
    )
    assert forbidden_uses(ast.parse(source), NAMES) == []
