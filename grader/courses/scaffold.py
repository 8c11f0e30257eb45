"""`grader new`: a problem folder to start from, in a course folder (made if need be).

The scaffold is a small working problem (a function that scales a tensor), so `grader
validate` passes on it at once; the instructor then rewrites each file.
"""

from __future__ import annotations

import json
from pathlib import Path

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
number = 1
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


def scaffold(course: Path, problem_id: str, symbol: str = "solve") -> Path:
    """Write problems/<problem_id>/ and reference_solutions/<problem_id>.py into `course` (and
    its course.toml if it has none)."""
    folder = course / "problems" / problem_id
    if folder.exists():
        raise CourseError(f"{folder} exists: not overwritten")
    if not (course / "course.toml").is_file():
        course.mkdir(parents=True, exist_ok=True)
        text = COURSE.format(name=json.dumps(course.resolve().name))
        (course / "course.toml").write_text(text, encoding="utf-8")
    files = {
        "spec.toml": SPEC,
        "statement.md": STATEMENT,
        "starter.py": STARTER,
        "accepted/halved.py": ACCEPTED,
        "mutants/unchanged.py": MUTANT,
    }
    paths = {folder / name: template for name, template in files.items()}
    paths[reference_path(folder)] = REFERENCE
    for path, template in paths.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(id=problem_id, symbol=symbol), encoding="utf-8")
    return folder
