"""Jupyter notebooks handed in: read by nbformat (an older format upgraded, the result
validated), their code cells as a Python module named after the notebook, with the cell magics
and shell escapes left out (and counted), and whether a module defines a problem's names.

A notebook is the candidate's JSON: read with strict size limits by staging, never executed here.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from grader.sandboxing.bindings import bound
from grader.sandboxing.definitions import parse
from grader.sandboxing.parsetime import key

NOTEBOOK = ".ipynb"
IPYTHON = ("%", "!")  # a line magic, a shell escape: not Python
PYTHON_CELLS = {"time", "timeit", "capture", "prun", "debug", "python", "python3"}
"""The cell magics whose body is Python, run as it is (timed, captured, profiled): the body is
kept, the magic's line left out. Any other cell (`%%bash`, `%%writefile`, `%%html`...) is left
out whole."""
LEFT_OUT = "# left out (not Python): "
MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NOT_NAME = re.compile(r"[^A-Za-z0-9_]+")
FOUND_FIRST = sys.stdlib_module_names | {"torch", "numpy", "safetensors"}
"""Modules Python finds before the submission's folder (last on the import path): a notebook's
module never takes their name."""
LINE_END = re.compile(r"\r\n|\r|\n")
MAX_WHY = 160  # characters of nbformat's validation message kept
MAX_NOTEBOOK_BYTES = 16 << 20
"""A notebook's file, its outputs (plots, tables) included: a course notebook run top to bottom
holds megabytes of images."""
MAX_CELLS_BYTES = 2 << 20
"""A submission's notebooks' JSON once their outputs are left out, together: what nbformat
reads and validates (pure Python, about 2 s a MiB of cells on a loaded 2-core machine; a
student's notebook holds some 100 KB)."""


def without_outputs(data: bytes) -> bytes | None:
    """The notebook's JSON with its cells' outputs and attachments left out (nothing here reads
    them, and they are most of a run notebook's bytes), in any format version; None if it is no
    JSON object."""
    try:
        notebook = json.loads(data)
    except (ValueError, RecursionError):  # not JSON (or not UTF-8), or nested past the stack
        return None
    if not isinstance(notebook, dict):
        return None
    sheets = notebook.get("worksheets")  # format 3 keeps its cells in worksheets
    holders = [notebook, *(sheets if isinstance(sheets, list) else [])]
    for holder in holders:
        cells = holder.get("cells") if isinstance(holder, dict) else None
        for cell in cells if isinstance(cells, list) else []:
            if isinstance(cell, dict):
                cell.pop("attachments", None)
                if "outputs" in cell:
                    cell["outputs"] = []
    return json.dumps(notebook).encode()


@dataclass(frozen=True)
class Converted:
    source: bytes
    left_out: int  # magic and shell lines commented out
    invalid: str = ""  # what nbformat's validation found wrong, where it did
    cells: tuple[tuple[int, int], ...] = ()  # (the module's line, from 1, where it starts, cell)

    def cell_at(self, line: int) -> int:
        """The notebook's cell (from 1, as it shows them, text cells counted) holding `line`."""
        return max((c for start, c in self.cells if start <= line), default=1)


def cells_of(data: bytes) -> tuple[list[tuple[str, str]], str] | None:
    """The notebook's cells, as (type, source), read by nbformat in its current format, and what
    its validation found wrong (empty if nothing); None if it is no notebook."""
    try:
        notebook: Any = nbformat.convert(nbformat.reader.reads(data), 4)
    except Exception:  # the candidate's bytes: whatever nbformat raises, no notebook
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        return None
    read = [(c.get("cell_type"), c.get("source", "")) for c in cells]
    read = [(k, "".join(s) if isinstance(s, list) else s) for k, s in read]
    if not all(isinstance(k, str) and isinstance(s, str) for k, s in read):
        return None
    return read, problems_of(notebook)


def problems_of(notebook: Any) -> str:
    """What nbformat's validation finds wrong with the notebook; cell ids, which nothing here
    reads, given where missing or repeated (as Jupyter does on saving)."""
    if notebook.get("nbformat_minor", 0) >= 5:
        for number, cell in enumerate(notebook["cells"]):
            cell["id"] = f"cell-{number}"
    try:
        nbformat.validate(notebook)
    except Exception as exc:  # nbformat's ValidationError, or what a malformed field raises
        why = str(getattr(exc, "message", exc)).splitlines()[0] if str(exc) else type(exc).__name__
        return why if len(why) <= MAX_WHY else why[: MAX_WHY - 3] + "..."
    return ""


def holds_notebook(folder: Path) -> bool:
    """Whether `folder` holds a notebook at its top (staging finds problem files in it)."""
    return any(path.suffix == NOTEBOOK and path.is_file() for path in folder.iterdir())


def module_for(name: str, taken: Collection[str]) -> str | None:
    """The module a notebook named `name` is read as: `homework.ipynb` as `homework.py`, beside
    no `homework.py` (None there: that file is what was handed in); any other name made a
    module's (`Copy of hw.ipynb` as `Copy_of_hw.py`, `1.ipynb` as `notebook_1.py`, `code.ipynb`
    as `code_notebook.py`: the standard library has `code`), a number added where `taken`
    (files beside it, modules of notebooks) has it."""
    stem = name.removesuffix(NOTEBOOK)
    if MODULE.fullmatch(stem) and f"{stem}.py" in taken:
        return None
    made = NOT_NAME.sub("_", stem).strip("_") or "notebook"
    if not MODULE.fullmatch(made):
        made = f"notebook_{made}"
    if keyword.iskeyword(made) or made in FOUND_FIRST:
        made = f"{made}_notebook"
    module, number = made, 1
    while f"{module}.py" in taken:
        number += 1
        module = f"{made}_{number}"
    return f"{module}.py"


def lines_of(text: str) -> list[str]:
    """A cell's lines as Python counts them (`str.splitlines` also breaks at a form feed, which
    a string may hold)."""
    lines = LINE_END.split(text)
    return lines[:-1] if lines and not lines[-1] else lines


def notebook_module(data: bytes) -> Converted | None:
    """The notebook's code cells, in order, as one module; None if it is not a notebook."""
    read = cells_of(data)
    if read is None:
        return None
    cells, invalid = read
    lines: list[str] = []
    starts = []
    left_out = 0
    for number, (kind, text) in enumerate(cells, start=1):
        if kind != "code":
            continue
        starts.append((len(lines) + 1, number))
        first = text.split(maxsplit=1)[0] if text.strip() else ""
        foreign = first.startswith("%%") and first[2:] not in PYTHON_CELLS
        for line in lines_of(text):
            if foreign or line.lstrip().startswith(IPYTHON):
                lines.append(LEFT_OUT + line)
                left_out += 1
            else:
                lines.append(line)
        lines.append("")
    source = "\n".join(lines).encode("utf-8", "surrogatepass")  # a lone surrogate: not UTF-8
    return Converted(source, left_out, invalid, tuple(starts))


_bound: dict[str, tuple[set[str], list[str]] | None] = {}  # a module's digest -> `bound` of it
MAX_BOUND = 1024


def bound_names(source: bytes) -> tuple[set[str], list[str]] | None:
    """`bound` of the module's tree, parsed once for every problem that asks (None: it does not
    parse, or a star import may bind any name)."""
    digest = key(source)
    if digest not in _bound:
        tree = parse(source)
        if len(_bound) >= MAX_BOUND:
            _bound.clear()
        _bound[digest] = bound(tree) if tree is not None else None
    return _bound[digest]


def defines(source: bytes, names: Sequence[str]) -> bool:
    """Whether the module binds every one of `names` at its top level (a class, a function, an
    assignment or an import)."""
    seen = bound_names(source)
    return seen is not None and all(name in seen[0] for name in names)
