"""Source checks: a forbidden API is proven used, tampering is named, honest code is clean, and
each problem reads only its own files."""

from __future__ import annotations

import sys
from types import FrameType

import pytest

from grader.courses.catalog import Catalog
from grader.reports.models import CheckStatus, ProblemStatus
from grader.sandboxing.results import ProblemExit, ProblemRun
from grader.verdict.checks.bindings import MAX_LINKS, chain_paths
from grader.verdict.checks.loops import computing_loops, find_function
from grader.verdict.checks.routes import Route, find_routes
from grader.verdict.checks.scope import SourceFile, Sources
from grader.verdict.checks.source import ForbiddenApi
from grader.verdict.judge import judge_problem
from grader.verdict.prepare import prepare

NAMES = {"scaled_dot_product_attention", "MultiheadAttention"}


def routes(source: str | bytes) -> list[Route]:
    data = source.encode() if isinstance(source, str) else source
    file = SourceFile("solution.py", "solution", data)
    assert file.tree is not None, file.unreadable
    return find_routes(file, NAMES, file.defined)


def texts(files: dict[str, str]) -> Sources:
    """Sources from text, as files hold it: UTF-8 bytes."""
    return Sources({path: text.encode() for path, text in files.items()})


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
        # a `__main__` block that runs on import: the file renames itself, or it is the `else`
        '__name__ = "__main__"\nif __name__ == "__main__":\n'
        "    from torch.nn.functional import scaled_dot_product_attention",
        'import m\nm.__name__ = "__main__"\nif __name__ == "__main__":\n'
        "    from torch.nn.functional import scaled_dot_product_attention",
        'if __name__ == "__main__":\n    pass\nelse:\n'
        "    from torch.nn.functional import scaled_dot_product_attention",
        # a function named like a test that the module uses
        "import torch.nn.functional as F\n"
        "def test_attend(q):\n    return F.scaled_dot_product_attention(q, q, q)\n"
        "attend = test_attend\n",
        # a function the `__main__` block calls that the module uses too
        "import torch.nn.functional as F\n"
        "def attend(q):\n    return F.scaled_dot_product_attention(q, q, q)\n"
        "class A:\n    forward = attend\n"
        'if __name__ == "__main__":\n    attend(None)\n',
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
    sources = texts(
        {
            "causal_self_attention.py": "import helpers\nfrom pkg.base import Base\n",
            "helpers.py": "from . import split_heads\nimport math\n",
            "split_heads.py": "x = 1\n",
            "pkg/__init__.py": "",
            "pkg/base.py": "from .more import y\n",
            "pkg/more.py": "y = 2\n",
            "flash_attention.py": "import torch\n",
            "math.py": "imported = True  # named after a standard module: in scope\n",
            "json.py": "imported = False  # named after a standard module: not in scope\n",
        }
    )
    scope = [f.path for f in sources.scope("causal_self_attention.py")]
    assert scope == [
        "causal_self_attention.py",
        "helpers.py",
        "math.py",
        "pkg/__init__.py",
        "pkg/base.py",
        "pkg/more.py",
        "split_heads.py",
    ]
    assert [f.path for f in sources.scope("flash_attention.py")] == ["flash_attention.py"]


@pytest.mark.parametrize(
    ("entry", "helper"),
    [
        # where the image lacks a standard module, Python imports the candidate's file
        ("import tkinter\n", "tkinter.py"),
        ("from json import attend\n", "json.py"),
        ("import torch.helpers\n", "torch/helpers.py"),
        # imports by a literal name, however the importer is reached
        ("from importlib import import_module as load\nm = load('helpers')\n", "helpers.py"),
        ("import importlib\nm = getattr(importlib, 'import_module')('helpers')\n", "helpers.py"),
        ("m = __import__('helpers')\n", "helpers.py"),
        ("import importlib\nm = importlib.import_module(name='helpers')\n", "helpers.py"),
        ("import importlib\nm = importlib.import_module('.helpers', 'pkg')\n", "pkg/helpers.py"),
    ],
)
def test_scope_holds_what_python_may_import(entry: str, helper: str) -> None:
    sources = texts({"entry.py": entry, helper: "x = 1\n"})
    assert [f.path for f in sources.scope("entry.py")] == ["entry.py", helper]


def test_find_function_follows_imports_and_base_classes() -> None:
    sources = texts(
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
    sources = texts({"m.py": source})
    start = find_function(sources, sources.files["m.py"], "A.f" if "class A" in source else "f")
    assert start is not None
    assert bool(computing_loops(sources, start)) is expected


def tampering(source: str | bytes) -> list[str]:
    return [r.what for r in routes(source) if r.tampering]


@pytest.mark.parametrize(
    ("source", "what"),
    [
        # code loaded by path or from text
        ("import runpy\nattend = runpy.run_path('kernels.py')['attend']", "runpy"),
        (
            "import importlib.util\n"
            "spec = importlib.util.spec_from_file_location('k', 'kernels.py')",
            "import machinery",
        ),
        ("from importlib.machinery import SourceFileLoader", "import machinery"),
        ("import importlib\nloader = importlib.abc.Loader", "import machinery"),
        ("import importlib._bootstrap_external", "import machinery"),
        ("import pkgutil\nattend = pkgutil.resolve_name('kernels:attend')", "pkgutil"),
        ("import zipimport", "zipimport"),
        ("import imp", "import machinery"),
        ("import sys\nsys.meta_path.insert(0, finder)", "import machinery"),
        ("import sys\nsys.path_hooks.append(hook)", "import machinery"),
        ("import sys\nsys.path_importer_cache.clear()", "import machinery"),
        ("import sys\nextend(sys)", "the module sys passed around as a value"),
        ("loader = __loader__", "loader"),
        ("import torch\nspec = torch.nn.__spec__", "spec"),
        ("import marshal\ncode = marshal.loads(blob)", "marshal"),
        ("import pickle\nf = pickle.loads(blob)", "pickle"),
        # torch.load that unpickles: not asked for tensors only, or asked in a way the host
        # cannot read
        ("import torch\nsd = torch.load('m.pt', weights_only=False)", "torch.load"),
        ("import torch\nsd = torch.load('m.pt')", "torch.load"),
        ("import torch\nsd = torch.load('m.pt', weights_only=flag)", "torch.load"),
        ("import torch\nsd = torch.load('m.pt', weights_only=True, **more)", "torch.load"),
        ("import torch, pickle\nsd = torch.load(f, None, pickle, weights_only=True)", "pickle"),
        ("import torch\nload = torch.load\nsd = load('m.pt', weights_only=True)", "torch.load"),
        ("from torch import load\nsd = load('m.pt', weights_only=True)", "torch.load"),
        ("import types\nf = types.FunctionType(code, {})", "function built from a code object"),
        ("import subprocess\nsubprocess.run(['python', '-c', text])", "another program"),
        ("import os\nos.system('python -c ' + text)", "another program"),
        ("from os import execv", "another program"),
        ("import torch.utils.cpp_extension as ext\nm = ext.load_inline('m', src)", "native code"),
        ("import torch\nm = torch.jit.load(buffer)", "compiled program"),
        # hooks into torch's own dispatch
        ("import torch\nlib = torch.library.Library('aten', 'IMPL')", "torch.library"),
        ("from torch.overrides import TorchFunctionMode", "torch.overrides"),
        ("from torch.utils._python_dispatch import TorchDispatchMode", "dispatch modes"),
        (
            "import torch\nclass T(torch.Tensor):\n    @classmethod\n"
            "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
            "        return func(*args)",
            "__torch_function__",
        ),
        ("class T:\n    __torch_dispatch__ = handler", "__torch_dispatch__"),
        ("import torch\nT = type('T', (torch.Tensor,), {'__torch_function__': f})", "override"),
        ("import torch\nT = type('T', (torch.Tensor,), dict(__torch_function__=f))", "override"),
        ("import sys\nsys.addaudithook(hook)", "audit hook"),
        ("import sys\nsys.audit('event')", "audit event"),
        # names built at run time on any imported module
        ("import math\nf = getattr(math, name)", "computed name"),
        ("import torch\nf = getattr(torch, name, 'a literal default')", "computed name"),
        ("import sys\nm = getattr(sys, 'mod' + 'ules')", "computed name"),
        ("import os\ndelattr(os, name)", "computed name"),
        ("import importlib\nm = importlib.import_module(**spec)", "built at run time"),
        ("import sys\npair = (sys, 'path')\nf = getattr(*pair)", "built at run time"),
        ("import sys\nm = object.__getattribute__(sys, name)", "__getattribute__"),
        ("from sys import *\npath.append('/tmp')", "a star import from sys"),
        ("from importlib import import_module as load\nm = load(name)", "computed name"),
        ("import sys\nns = vars(sys)", "imported namespace"),
        ("import sys\nns = sys.__dict__", "imported namespace"),
        ("get = getattr\nf = get(module, name)", "getattr handed around as a value"),
        ("import functools\nf = functools.reduce(getattr, names, root)", "as a value"),
        # the interpreter's attributes, which reach objects never handed over (the guard's)
        ("b = print.__self__", "__self__ (an attribute of the interpreter's"),
        ("subs = type.__subclasses__(object)", "__subclasses__"),
        ("base = ().__class__.__mro__[-1]", "__mro__"),
        ("f = m.forward.__func__", "__func__"),
        ("b = globals()['__builtins__']", "['__builtins__']"),
        ("g = getattr(f, '__glob' 'als__')", "__globals__"),
        # names built at run time that may be private, on any object
        ("g = getattr(f, '__glob' + 'als__')", "may be private"),
        ("g = getattr(f, name)", "may be private"),
        ("setattr(obj, ''.join(parts), None)", "may be private"),
        ("i = vars(b)['__imp' + 'ort__']", "a namespace read by a name built at run time"),
        ("x = obj.__dict__[key]", "a namespace read by a name built at run time"),
        ("for n in ('qkv', '_secret'):\n    getattr(m, n)", "may be private"),
        # a library's module changed: the grader's own code reads it too
        ("import json\njson.dumps = lambda *a, **k: '{}'", "json.dumps changed"),
        ("import torch\ntorch.allclose = lambda *a, **k: True", "torch.allclose changed"),
        ("from json import encoder\nencoder.JSONEncoder.encode = f", "changed"),
        ("import json\ndel json.loads", "json.loads changed"),
        ("import json\nsetattr(json, 'dumps', f)", "setattr(json, 'dumps')"),
        # the same, by ways around the rules above
        ("X = type.__dict__.get('__subclasses__')(object)", "'__subclasses__' in a string"),
        ("for n in ['glob']:\n    n = '__glob' + 'als__'\n    getattr(f, n)", "may be private"),
        ("for n in ['a']:\n    def g(o, n):\n        return getattr(o, n)", "may be private"),
        ("import json\n[json][0].dumps = f", "the module json passed around as a value"),
        ("import json\nobject.__setattr__(json, 'dumps', f)", "json passed around as a value"),
        ("import dataclasses\nd = [dataclasses][0]", "dataclasses passed around as a value"),
        ("text = '{0.__init__.__globals__}'.format(x)", "'__globals__' in a string"),
        ("import linecache\nlinecache.cache[name] = entry", "linecache"),
        ("import inspect\ninspect.linecache.cache[name] = entry", "linecache"),
    ],
)
def test_loading_and_hooking_are_tampering(source: str, what: str) -> None:
    found = tampering(source)
    assert any(what in w for w in found), found


@pytest.mark.parametrize(
    ("source", "private"),
    [
        (
            "import torch\ny = torch._scaled_dot_product_attention_math(q, k, v)[0]",
            "torch._scaled_dot_product_attention_math",
        ),
        (
            "from torch import _native_multi_head_attention as mha",
            "torch._native_multi_head_attention",
        ),
        (
            "import torch as t\nf = getattr(t, '_scaled_dot_product_flash_attention_for_cpu')",
            "torch._scaled_dot_product_flash_attention_for_cpu",
        ),
        ("import torch.nn.functional as F\nw = F._in_projection_packed", "torch.nn.functional._in"),
        ("import torch._dynamo", "torch._dynamo"),
        ("import torch\nconfig = torch._dynamo.config.verbose", "torch._dynamo"),
    ],
)
def test_private_torch_names_are_tampering(source: str, private: str) -> None:
    found = tampering(source)
    assert any(f"the private name {private}" in w for w in found), found


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nprint(torch.__version__, torch.nn.Module.__name__)",
        "import sys\nprint('checking', file=sys.stderr)\nsys.setrecursionlimit(2000)",
        "import os\nhere = os.path.join(os.path.dirname(__file__), 'data')",
        "import math\nscale = 1 / math.sqrt(64)",
        "from importlib import import_module\nhelpers = import_module('helpers')",
        "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        for i in range(2):\n            x = getattr(self.heads[i], 'W_query')(x)\n"
        "        return x",
        '"""No __torch_function__ override here, no sys.path trick."""',
        'def f():\n    """Unlike __subclasses__ or __globals__, nothing here reaches far."""\n',
        "class A:\n    def _attend(self, q):\n        return self._scale * q\n",
        # the plain dunders and reflection on names the source shows are public
        "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.tag = self.__class__.__name__\n"
        "    def __repr__(self):\n        return f'{type(self).__qualname__}({self.__dict__})'\n",
        "def sizes(x):\n    return x.__len__(), x.__getitem__(0), x.__class__.__module__\n",
        "def heads(m, n):\n    return [getattr(m, f'head_{i}') for i in range(n)]\n",
        "def check(mha):\n    for name in ('qkv', 'proj'):\n        getattr(mha, name)\n",
        "def check(mha):\n    return [getattr(mha, n) for n in ['W_query', 'W_key']]\n",
        "def get(m, i):\n    return getattr(m, 'layer_' + str(i))\n",
        "import config\nconfig.DEBUG = True\n",
        # tests pytest or unittest collect, which importing never runs
        "import pytest, unittest\nimport torch.nn.functional as F\n"
        "@pytest.mark.parametrize('t', [4, 8])\n"
        "def test_matches_sdpa(t):\n    F.scaled_dot_product_attention(q, q, q)\n"
        "class TestAttention(unittest.TestCase):\n"
        "    def test_sdpa(self):\n        F.scaled_dot_product_attention(q, q, q)\n",
        # private torch names public code uses as public ones
        "import torch\ntorch._assert(x.dim() == 3, 'expected (B, T, C)')\n"
        "fan_in, _ = torch.nn.init._calculate_fan_in_and_fan_out(w)",
        # a helper folder put on the path, as notebooks and course templates do
        "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\nimport helpers",
        "# coding: utf8\nimport math\n",
        # a checkpoint saved and loaded back as tensors only (torch's default since 2.6)
        "import torch\ndef roundtrip(m, path):\n    torch.save(m.state_dict(), path)\n"
        "    return torch.load(path, map_location='cpu', weights_only=True)\n",
        # a self-test under `__main__`, which grading never runs
        "import torch\nimport torch.nn.functional as F\n"
        "def attend(q, k, v):\n    return (q @ k.transpose(-2, -1)).softmax(-1) @ v\n"
        'if __name__ == "__main__":\n    q = torch.randn(1, 2, 4, 8)\n'
        "    assert torch.allclose(attend(q, q, q), F.scaled_dot_product_attention(q, q, q))\n",
        # a self-test function that only the `__main__` block calls
        "import torch.nn.functional as F\n"
        "def _compare(q):\n    return F.scaled_dot_product_attention(q, q, q)\n"
        'if __name__ == "__main__":\n    _compare(None)\n',
    ],
)
def test_honest_code_stays_clean(source: str) -> None:
    assert routes(source) == []


BOM = b"\xef\xbb\xbf"


def test_a_byte_order_mark_is_read_as_python_reads_it() -> None:
    source = BOM + b"import torch\ny = torch._scaled_dot_product_attention_math(q, k, v)\n"
    assert tampering(source) == ["the private name torch._scaled_dot_product_attention_math"]
    assert routes(BOM + b"# coding: utf-8\nimport math\n") == []


def test_a_declared_encoding_is_read_as_python_reads_it() -> None:
    """UTF-7 hides a line from a reader of the bytes: the host reads what Python runs."""
    source = (
        b"# coding: utf-7\nimport torch\n# +AAo-F = torch.nn.functional\n"
        b"# +AAo-y = F.scaled+AF8-dot+AF8-product+AF8-attention(q, k, v)\n"
    )
    found = routes(source)
    assert Route(1, "a '# coding: utf-7' declaration", True) in found
    assert any(r.what == "torch.nn.functional.scaled_dot_product_attention" for r in found)
    assert tampering(b"#!/usr/bin/env python\n# -*- coding: latin-1 -*-\nx = 1\n") == [
        "a '# coding: latin-1' declaration"
    ]


DEEP_EXPRESSION = "x = " + "+".join(["a"] * 3000) + "\n"
MANY_NODES = (b"x = a" + b".b" * 150 + b"\n") * 700  # about 2 nodes an attribute


@pytest.mark.parametrize(
    ("data", "line", "why"),
    [
        (b"import torch\ndef f(:\n    pass\n", 2, "SyntaxError: invalid syntax"),
        (b"x = (\n", 1, "SyntaxError: '(' was never closed"),
        (b"x = 1\x00\n", 0, "null bytes"),
        (b"x = '\xff'\n", 1, "can't decode byte 0xff"),
        (BOM + b"# coding: latin-1\nx = 1\n", 0, "encoding problem"),
        (b"# coding: no-such-codec\nx = 1\n", 0, "unknown encoding"),
        (DEEP_EXPRESSION.encode(), 0, "nested too deeply for the grader to read"),
        # valid Python: a tuple 150 deep (Python allows 200), a chain of 300 attributes
        (b"a = 1\nx = " + b"(" * 150 + b"1," + b")" * 150 + b"\n", 2, "nested too deeply"),
        (b"x = a" + b".b" * 300 + b"\n", 0, "nested too deeply for the grader to read"),
        (b"x = 1\n" * 20_001, 20_000, "over 20000 lines"),
        (b"#" * (1 << 20) + b"\n", 0, "over the grader's limit"),
        (MANY_NODES, 0, "over 100000 syntax nodes"),
    ],
)
def test_what_the_host_cannot_read_is_unreadable(data: bytes, line: int, why: str) -> None:
    file = SourceFile("helper.py", "helper", data)
    assert file.tree is None and file.unreadable is not None
    assert file.unreadable.line == line and why in file.unreadable.why, file.unreadable
    assert find_routes(file, NAMES, set()) == []


def test_an_unreadable_file_in_scope_fails_forbidden_api(catalog: Catalog) -> None:
    """The reference's own results, with a helper the host cannot read: only that check fails."""
    problem = "causal_self_attention"
    prepared = prepare(catalog.select([problem]), 0, catalog.reference_source())[problem]
    entry = b"import helpers\n" + prepared.problem.reference_file.read_bytes()
    files = {prepared.problem.spec.entry: entry, "helpers.py": DEEP_EXPRESSION.encode()}
    ended = ProblemExit(exit_code=0, signal=None, timed_out=False, seconds=1.0)
    run = ProblemRun(problem, ended, started=True, imported=True, probes=prepared.reference)
    report = judge_problem(prepared, run, Sources(files))
    failed = [c for c in report.checks if c.status is not CheckStatus.passed]
    assert [c.check for c in failed] == ["forbidden_api"], failed
    assert "helpers.py: nested too deeply for the grader to read" in failed[0].message
    assert report.status is ProblemStatus.forbidden_api


def frames() -> int:
    """How many frames deep the caller runs."""
    frame: FrameType | None = sys._getframe()
    count = 0
    while frame is not None:
        frame, count = frame.f_back, count + 1
    return count


def test_deep_valid_code_is_walked_without_recursion() -> None:
    """Just within the depth the host reads, with a recursion limit far below that depth: every
    walker over the tree keeps its own stack."""
    chain = "mha" + ".x" * 180
    source = (
        "import torch\n"
        f"def f(mha, q, n):\n    for h in range(n):\n        y = {chain}(q[h]) @ q[h]\n"
        f"    return {chain}\n"
        f"class A({chain}):\n    pass\n"
    )
    sources = texts({"m.py": source})
    file = sources.files["m.py"]
    assert file.tree is not None
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(frames() + 60)
    try:
        found = find_routes(file, NAMES, file.defined)
        start = find_function(sources, file, "f")
        loops = computing_loops(sources, start) if start is not None else []
        missing = find_function(sources, file, "A.forward")
    finally:
        sys.setrecursionlimit(limit)
    assert found == [] and len(loops) == 1 and missing is None


def test_each_chain_of_attributes_is_resolved_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chains of 180 attributes: every link is resolved once, not once per link above it
    (quadratic: minutes for a file within the caps); a chain too long to resolve on an
    imported name is tampering."""
    walked: list[int] = []

    def counted(node: object, bindings: dict[str, str]) -> tuple[dict[int, str | None], bool]:
        paths, deep = chain_paths(node, bindings)  # type: ignore[arg-type]
        walked.append(len(paths))
        return paths, deep

    monkeypatch.setattr("grader.verdict.checks.routes.chain_paths", counted)
    chains = "".join(f"    y{i} = x" + ".a" * 180 + "\n" for i in range(2))
    file = SourceFile("m.py", "m", f"import torch\ndef f(x):\n{chains}".encode())
    assert find_routes(file, NAMES, set()) == []
    assert sum(walked) == 2 * 180
    walked.clear()
    deep = SourceFile("m.py", "m", ("import torch\nx = torch" + ".a" * 180 + "\n").encode())
    assert tampering(deep.data) == [f"a chain of over {MAX_LINKS} attributes on an imported name"]
    assert sum(walked) == 180


def test_a_long_chain_of_calls_is_followed_without_recursion() -> None:
    """A loop whose work is 2000 calls deep: found, as the recursive walk found short ones."""
    helpers = "".join(f"def h{i}(q):\n    return h{i + 1}(q)\n" for i in range(2000))
    source = helpers + "def h2000(q):\n    return q @ q\n"
    source += "def f(q, n):\n    return [h0(q[h]) for h in range(n)]\n"
    sources = texts({"m.py": source})
    start = find_function(sources, sources.files["m.py"], "f")
    assert start is not None and len(computing_loops(sources, start)) == 1


def test_a_lattice_of_base_classes_is_searched_once_per_class() -> None:
    """Ten levels of twelve classes, each inheriting all twelve below: 12**10 paths to the
    method, 121 classes to read."""
    source = "class Impl:\n    def forward(self, x):\n        return x @ x\n"
    below = ["Impl"]
    for level in range(10):
        names = [f"L{level}_{i}" for i in range(12)]
        source += "".join(f"class {n}({', '.join(below)}):\n    pass\n" for n in names)
        below = names
    source += f"class Top({', '.join(below)}):\n    pass\n"
    sources = texts({"m.py": source})
    found = find_function(sources, sources.files["m.py"], "Top.forward")
    assert found is not None and found.owner == "Impl"
    assert find_function(sources, sources.files["m.py"], "Top.backward") is None


@pytest.mark.parametrize(
    ("helper", "names", "fails"),
    [
        # a shared helper's flash path, for a problem that allows SDPA: the guard refuses it here
        ("import torch.nn.functional as F\ndef flash(q):\n"
         "    return F.scaled_dot_product_attention(q, q, q)\n", None, False),
        # a name no guard refuses (an instructor's own): the host is its only reader
        ("import torch\ndef mix(a, b):\n    return torch.einsum('ij,jk->ik', a, b)\n",
         ["scaled_dot_product_attention", "einsum"], True),
    ],
)  # fmt: skip
def test_a_helpers_use_counts_where_the_guard_cannot_refuse_it(
    catalog: Catalog, helper: str, names: list[str] | None, fails: bool
) -> None:
    problem = "causal_self_attention"
    prepared = prepare(catalog.select([problem]), 0, catalog.reference_source())[problem]
    if names is not None:  # the course's check, given its own names
        at, check = next(
            (i, c) for i, c in enumerate(prepared.checks) if isinstance(c, ForbiddenApi)
        )
        spec = check.spec.model_copy(update={"params": {"names": names}})
        prepared.checks[at] = ForbiddenApi(spec, prepared.problem.spec)
    entry = b"import helpers\n" + prepared.problem.reference_file.read_bytes()
    files = {prepared.problem.spec.entry: entry, "helpers.py": helper.encode()}
    ended = ProblemExit(exit_code=0, signal=None, timed_out=False, seconds=1.0)
    run = ProblemRun(problem, ended, started=True, imported=True, probes=prepared.reference)
    report = judge_problem(prepared, run, Sources(files))
    found = next(c for c in report.checks if c.check == "forbidden_api")
    assert (found.status is CheckStatus.failed) is fails, found.message
    assert ("einsum at helpers.py:3" in found.message) is fails, found.message


def test_a_re_exported_definition_of_the_problem_s_name_is_the_entry_file_s(
    catalog: Catalog,
) -> None:
    """A notebook for the whole set is graded through entry files that only re-export its
    module: a forbidden call in the problem's own class there counts, even on a path the probes
    never take; one in another problem's class of the same module (problem 10's flash path)
    does not."""
    problem = "causal_self_attention"
    prepared = prepare(catalog.select([problem]), 0, catalog.reference_source())[problem]
    reference = prepared.problem.reference_file.read_text()
    never = (
        "        if getattr(self, 'fast', False):\n"
        "            return F.scaled_dot_product_attention(x, x, x, is_causal=True)\n"
    )
    own = reference.replace("        B, T, C = x.shape\n", never + "        B, T, C = x.shape\n")
    assert own != reference
    flash = "class Flash:\n    def forward(self, q):\n"
    flash += "        return F.scaled_dot_product_attention(q, q, q)\n"
    ended = ProblemExit(exit_code=0, signal=None, timed_out=False, seconds=1.0)
    for module, fails in ((own, True), (reference, False)):
        source = "import torch.nn.functional as F\n" + module + flash
        files = {
            prepared.problem.spec.entry: b"from homework import *\n",
            "homework.py": source.encode(),
        }
        run = ProblemRun(problem, ended, started=True, imported=True, probes=prepared.reference)
        report = judge_problem(prepared, run, Sources(files))
        found = next(c for c in report.checks if c.check == "forbidden_api")
        assert (found.status is CheckStatus.failed) is fails, found.message
