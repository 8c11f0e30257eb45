"""`grader new`: a problem folder to start from, in a course folder (made if need be).

The scaffold is a small working problem (a function that scales a tensor), so `grader
validate` passes on it at once; the instructor then rewrites each file.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from grader.compat import tomllib
from grader.specs.course import CourseError
from grader.specs.paths import reference_path

COURSE = """\
# The course: its name, the due date after which `after_due_date` checks are shown, and
# (optionally) the problems an assignment sets; without [[problems]], every folder in problems/.
name = {name}
# due = 2026-12-01T23:59:00Z
"""

SPEC = """\
id = "{id}"
number = {number}
title = "TODO: the problem's title"
entry = "{id}.py"
kind = "function"  # or "module": then `init` in each config builds it
symbols = ["{symbol}"]
forbidden = []  # e.g. "scaled_dot_product_attention"

[[configs]]
id = "small"
args = [{{ shape = [2, 4, 8] }}]

[[configs]]
id = "large"
args = [{{ shape = [3, 16, 32] }}]

[[checks]]
name = "{symbol} returns the input's shape"
check = "output_shape"
points = 1

[[checks]]
name = "{symbol} matches the reference"
check = "allclose"
points = 2
params = {{ configs = ["small"] }}

[[checks]]
name = "{symbol} matches the reference on a larger input"
check = "allclose"
points = 2
visibility = "hidden"
params = {{ configs = ["large"] }}
"""

STATEMENT = """\
# TODO: the problem's title

Write `{symbol}(x)`: TODO, what it returns.
"""

STARTER = """\
import torch


def {symbol}(x: torch.Tensor) -> torch.Tensor:
    raise NotImplementedError
"""

REFERENCE = """\
import torch


def {symbol}(x: torch.Tensor) -> torch.Tensor:
    return x * 0.5
"""

ACCEPTED = """\
def {symbol}(x):
    return x / 2
"""

MUTANT = """\
# expect-fail: {symbol} matches the reference
def {symbol}(x):
    return x
"""


MODULE_SPEC = """\
id = "{id}"
number = {number}
title = "TODO: the problem's title"
entry = "{id}.py"
kind = "module"  # `init` in each config builds it, `args` calls it
symbols = ["{symbol}"]
forbidden = []  # e.g. "scaled_dot_product_attention"

[[configs]]
id = "small"
init = {{ width = 8 }}
args = [{{ shape = [2, 4, 8] }}]

[[configs]]
id = "large"
init = {{ width = 32 }}
args = [{{ shape = [3, 16, 32] }}]
why = "a wider layer, on more tokens"

[[checks]]
name = "{symbol} returns the input's shape"
check = "output_shape"
points = 1

[[checks]]
name = "{symbol} has a parameter named proj of the right shape"
check = "parameter_names"
points = 1
params = {{ config = "small" }}

[[checks]]
name = "{symbol} matches the reference"
check = "allclose"
points = 2
params = {{ configs = ["small"] }}

[[checks]]
name = "gradients reach the input and the parameters"
check = "gradients"
points = 1
params = {{ configs = ["small"] }}

[[checks]]
name = "{symbol} matches the reference on a wider layer"
check = "allclose"
points = 2
visibility = "hidden"
params = {{ configs = ["large"] }}
"""

MODULE_STATEMENT = """\
# TODO: the problem's title

Write `class {symbol}(nn.Module)`: `{symbol}(width)` holds one linear layer `proj` (width to
width, with a bias); `forward(x)` takes `(B, T, width)` and returns `proj(x)` halved. TODO.
"""

MODULE_STARTER = """\
import torch
from torch import nn


class {symbol}(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError
"""

MODULE_REFERENCE = """\
import torch
from torch import nn


class {symbol}(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x) * 0.5  # (B, T, width)
"""

MODULE_ACCEPTED = """\
from torch import nn


class {symbol}(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width, bias=True)

    def forward(self, x):
        return self.proj(x) / 2
"""

MODULE_MUTANT = """\
# expect-fail: {symbol} matches the reference
from torch import nn


class {symbol}(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        return self.proj(x)
"""


FILES = ("spec.toml", "statement.md", "starter.py", "accepted/halved.py", "mutants/unchanged.py")
"""What a problem's folder holds, in the order of the templates."""


def scaffold(course: Path, problem_id: str, symbol: str = "solve", module: bool = False) -> Path:
    """Write problems/<problem_id>/ and reference_solutions/<problem_id>.py into `course` (and
    its course.toml if it has none): a function's problem, or with `module` an nn.Module's."""
    folder = course / "problems" / problem_id
    if folder.exists():
        raise CourseError(f"{folder} exists: not overwritten")
    if not (course / "course.toml").is_file():
        course.mkdir(parents=True, exist_ok=True)
        text = COURSE.format(name=json.dumps(course.resolve().name))
        (course / "course.toml").write_text(text, encoding="utf-8")
    templates = (
        (MODULE_SPEC, MODULE_STATEMENT, MODULE_STARTER, MODULE_ACCEPTED, MODULE_MUTANT)
        if module
        else (SPEC, STATEMENT, STARTER, ACCEPTED, MUTANT)
    )
    names = (
        "spec.toml",
        "statement.md",
        "starter.py",
        "accepted/halved.py",
        "mutants/unchanged.py",
    )
    paths = {folder / name: template for name, template in zip(names, templates, strict=True)}
    paths[reference_path(folder)] = MODULE_REFERENCE if module else REFERENCE
    number = next_number(course / "problems")
    for path, template in paths.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        text = template.format(id=problem_id, symbol=symbol, number=number)
        path.write_text(text, encoding="utf-8")
    return folder


def next_number(problems: Path) -> int:
    """The number after the highest of the course's problems (1 for the first)."""
    numbers = [0]
    for spec in problems.glob("*/spec.toml"):
        with contextlib.suppress(OSError, ValueError):
            number = tomllib.loads(spec.read_text(encoding="utf-8")).get("number")
            numbers += [number] if isinstance(number, int) else []
    return max(numbers) + 1
