"""The host's side of the worker's protocol: the names of the result files it may send back."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

PROBLEM_FILES = ("started", "stdout.txt", "stderr.txt", "import.json", "exit.json")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def result_names(probes: Mapping[str, Iterable[str]]) -> frozenset[str]:
    """Every file the worker may send for these problems (problem id -> its probe ids)."""
    names = {"worker.json"}
    for problem, ids in probes.items():
        files = [*PROBLEM_FILES, *(f"{i}.{ext}" for i in ids for ext in ("json", "safetensors"))]
        for name in (problem, *files):
            if not _SAFE_NAME.match(name):
                raise ValueError(f"unsafe result name {name!r}")
        names.update(f"{problem}/{name}" for name in files)
    return frozenset(names)
