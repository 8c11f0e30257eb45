"""Source checks: a forbidden API is proven used, tampering is named, honest code is clean, and
each problem reads only its own files."""

from __future__ import annotations

import pytest

from grader.verdict.checks.loops import computing_loops, find_function
from grader.verdict.checks.routes import Route, find_routes
from grader.verdict.checks.scope import SourceFile, Sources

NAMES = {"scaled_dot_product_attention", "MultiheadAttention"}


def routes(source: str) -> list[Route]:
    file = SourceFile("solution.py", "solution", source)
    assert file.tree is not None
    return find_routes(file, NAMES, file.defined)


@pytest.mark.parametrize(
    "source",
    [
        "import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v)",
        "from torch.nn.functional import scaled_dot_product_attention as sdpa",
        "from torch.nn import functional\nf = functional.scaled_dot_product_attention",
        "import torch\nm = torch.nn.MultiheadAttention(8, 2)",
        "from torch import nn\nclass A(nn.MultiheadAttention):\n    pass",
        "import torch\nf = getattr(torch.nn.functional, 'scaled_dot_product_attention')",
        "from torch.nn.functional import *\ny = scaled_dot_product_attention(q, k, v)",
        "import importlib\nF = importlib.import_module('torch.nn.functional')\n"
        "y = F.scaled_dot_product_attention(q, k, v)",
        "import torch\nG = torch.nn.functional\ny = G.scaled_dot_product_attention(q, k, v)",
    ],
)
def test_uses_are_found(source: str) -> None:
    found = routes(source)
    assert found and not any(r.tampering for r in found), found


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nf = torch._C._nn.scaled_dot_product_attention",
        "from torch._C import _nn",
        "import torch\nf = torch.ops.aten._scaled_dot_product_attention_math",
        "from torch import ops\nf = ops.aten.mm",
        "import torch\nf = getattr(torch.nn.functional, 'scaled_dot_' + 'product_attention')",
        "import torch\nf = getattr(torch, '_' + 'C')",
        "import torch\nf = getattr(torch, '_C')",
        "import torch\nf = torch.nn.functional.__dict__['sdp' + 'a']",
        "import torch\nf = vars(torch.nn.functional)['scaled_dot_product_attention']",
        "f = eval('torch.nn.functional.sdpa')",
        "exec(code)",
        "import ctypes",
        "import gc\ngc.get_referents(f)",
        "import sys\nsys.modules['torch'] = None",
        "import sys\nframe = sys._getframe(1)",
        "import importlib, torch\nimportlib.reload(torch.nn.functional)",
        "import importlib\nm = importlib.import_module(name)",
        "original = f.__closure__[0].cell_contents",
        "import inspect\nframe = inspect.currentframe().f_back",
        "# coding: utf-7\nx = 1",
        "import torch.nn.functional as F\nf = getattr([F][0], 'scaled_dot_' + 'product_attention')",
        "import torch\nhide(torch.nn.functional)",
        "g = globals()",
        "import __main__",
        "import operator\nget = operator.attrgetter(name)",
    ],
)
def test_tampering_is_named(source: str) -> None:
    assert any(r.tampering for r in routes(source)), routes(source)


@pytest.mark.parametrize(
    "source",
    [
        # checking the grader's module over a literal tuple of attribute names
        'def mha_by_loop(mha, x):\n    for name in ("qkv", "proj", "n_head", "head_dim"):\n'
        "        if not hasattr(mha, name):\n"
        '            raise TypeError(f"mha has no {name}")\n    return x',
        # reflection on the candidate's own module
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n"
        "        for i in range(2):\n"
        "            setattr(self, f'head_{i}', torch.nn.Linear(2, 2))\n"
        "    def forward(self, x):\n"
        "        state = vars(self)\n"
        "        return sum(getattr(self, f'head_{i}')(x) for i in range(2))\n",
        # an error message or docstring naming what not to use
        '"""Do not use scaled_dot_product_attention here."""\n'
        "def f(x):\n"
        '    raise ValueError("write it by hand, not with scaled_dot_product_attention")',
        # the candidate's own helper that happens to carry the name
        "import math\nclass A:\n    def scaled_dot_product_attention(self, q, k, v):\n"
        "        return (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(-1) @ v\n"
        "    def forward(self, q, k, v):\n"
        "        return self.scaled_dot_product_attention(q, k, v)\n",
        # a capability probe, as nanoGPT writes it
        "import torch\nflash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')",
        "# -*- coding: utf-8 -*-\nimport inspect\nsig = inspect.signature(len)",
        # torch modules used as torch is used: attributes, calls, dtypes, an alias by name
        "import torch\nfrom torch import nn\nimport torch.nn.functional as F\nG = F\n"
        "y = G.softmax(torch.zeros(2, dtype=torch.float64), dim=-1)\n"
        "ok = isinstance(nn.Linear(2, 2), nn.Module) and hasattr(F, 'softmax')\n",
    ],
)
def test_honest_code_is_clean(source: str) -> None:
    assert routes(source) == []


def test_scope_follows_imports_and_nothing_else() -> None:
    sources = Sources(
        {
            "causal_self_attention.py": "import helpers\nfrom pkg.base import Base\n",
            "helpers.py": "from . import split_heads\nimport math\n",
            "split_heads.py": "x = 1\n",
            "pkg/__init__.py": "",
            "pkg/base.py": "from .more import y\n",
            "pkg/more.py": "y = 2\n",
            "flash_attention.py": "import torch\n",
            "math.py": "shadowed = True\n",
        }
    )
    scope = [f.path for f in sources.scope("causal_self_attention.py")]
    assert scope == [
        "causal_self_attention.py",
        "helpers.py",
        "pkg/__init__.py",
        "pkg/base.py",
        "pkg/more.py",
        "split_heads.py",
    ]
    assert [f.path for f in sources.scope("flash_attention.py")] == ["flash_attention.py"]


def test_find_function_follows_imports_and_base_classes() -> None:
    sources = Sources(
        {
            "multi_head_attention.py": "from base import Base\n"
            "class MultiHeadAttention(Base):\n    pass\n",
            "base.py": "import torch\nclass Base(torch.nn.Module):\n"
            "    def forward(self, x):\n        return x\n",
            "mha_by_loop.py": "from helpers import mha_by_loop\n",
            "helpers.py": "def mha_by_loop(mha, x):\n    return x\n",
        }
    )
    forward = find_function(
        sources, sources.files["multi_head_attention.py"], "MultiHeadAttention.forward"
    )
    assert forward is not None and forward.node.lineno == 3 and forward.file.path == "base.py"
    loop = find_function(sources, sources.files["mha_by_loop.py"], "mha_by_loop")
    assert loop is not None and loop.file.path == "helpers.py"
    assert find_function(sources, sources.files["base.py"], "Base.backward") is None


LOOP_CASES = {
    "a loop that computes each head": (
        "def f(q, k, n):\n    outs = []\n    for h in range(n):\n"
        "        outs.append(q[h] @ k[h])\n    return outs\n",
        True,
    ),
    "in a helper the function calls": (
        "def head(q, k):\n    return (q @ k).softmax(-1)\n"
        "def f(q, k, n):\n    return [head(q[h], k[h]) for h in range(n)]\n",
        True,
    ),
    "in a method reached through self": (
        "class A:\n    def heads(self, q, n):\n        return [q[h] @ q[h] for h in range(n)]\n"
        "    def f(self, q, n):\n        return self.heads(q, n)\n",
        True,
    ),
    "a dead generator inside an assert": (
        "def f(q, k, n):\n    assert all(q[h] @ k[h] is not None for h in range(n))\n"
        "    return q @ k\n",
        False,
    ),
    "a loop after the return": (
        "def f(q, k, n):\n    return q @ k\n    for h in range(n):\n        q[h] @ k[h]\n",
        False,
    ),
    "a loop over attribute names": (
        "def f(mha, n):\n    for name in names(n):\n        assert hasattr(mha, name)\n"
        "    return mha\n",
        False,
    ),
}


@pytest.mark.parametrize("case", sorted(LOOP_CASES))
def test_loops_that_compute_the_heads(case: str) -> None:
    source, expected = LOOP_CASES[case]
    sources = Sources({"m.py": source})
    start = find_function(sources, sources.files["m.py"], "A.f" if "class A" in source else "f")
    assert start is not None
    assert bool(computing_loops(sources, start)) is expected
