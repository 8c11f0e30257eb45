"""Jupyter notebooks handed in: their code cells as a Python module, with the cell magics and
shell escapes left out (and counted), and whether a module defines a problem's names.

A notebook is the candidate's JSON: read with strict size limits by staging, parsed by pydantic
(which ignores what it does not model), never executed here.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ValidationError

from grader.sandboxing.bindings import bound

NOTEBOOK = ".ipynb"
IPYTHON = ("%", "!")  # a line magic, a shell escape: not Python
PYTHON_CELLS = {"time", "timeit", "capture", "prun", "debug", "python", "python3"}
"""The cell magics whose body is Python, run as it is (timed, captured, profiled): the body is
kept, the magic's line left out. Any other cell (`%%bash`, `%%writefile`, `%%html`...) is left
out whole."""
LEFT_OUT = "# left out (not Python): "


class Cell(BaseModel):
    cell_type: str
    source: str | list[str] = ""


class Notebook(BaseModel):
    cells: list[Cell]


class Converted(BaseModel):
    source: bytes
    left_out: int  # magic and shell lines commented out


def holds_notebook(folder: Path) -> bool:
    """Whether `folder` holds a notebook at its top (staging finds problem files in it)."""
    return any(path.suffix == NOTEBOOK and path.is_file() for path in folder.iterdir())


def notebook_module(data: bytes) -> Converted | None:
    """The notebook's code cells, in order, as one module; None if it is not a notebook."""
    try:
        notebook = Notebook.model_validate_json(data)
    except ValidationError:
        return None
    lines: list[str] = []
    left_out = 0
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        text = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        first = text.split(maxsplit=1)[0] if text.strip() else ""
        foreign = first.startswith("%%") and first[2:] not in PYTHON_CELLS
        for line in text.splitlines():
            if foreign or line.lstrip().startswith(IPYTHON):
                lines.append(LEFT_OUT + line)
                left_out += 1
            else:
                lines.append(line)
        lines.append("")
    return Converted(source="\n".join(lines).encode(), left_out=left_out)


def defines(source: bytes, names: Sequence[str]) -> bool:
    """Whether the module binds every one of `names` at its top level (a class, a function, an
    assignment or an import)."""
    tree = None
    with contextlib.suppress(SyntaxError, ValueError, RecursionError, MemoryError):
        tree = ast.parse(source)
    seen = bound(tree) if tree is not None else None
    return seen is not None and all(name in seen[0] for name in names)
