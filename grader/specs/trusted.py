"""Importing the course's own trusted code: reference solutions and a problem's checks."""

from __future__ import annotations

import importlib.util
import traceback
from pathlib import Path
from types import ModuleType

from grader.specs.problem import SpecError


def import_file(path: Path, name: str) -> ModuleType:
    """Import a trusted file (reference or problem checks) under a private module name."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SpecError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the course's own code: its author is told where, in one line
        line = next(
            (
                f.lineno
                for f in reversed(traceback.extract_tb(exc.__traceback__))
                if f.filename == str(path)
            ),
            None,
        )
        where = f" (line {line})" if line else ""
        raise SpecError(f"{path}: cannot be imported{where}: {type(exc).__name__}: {exc}") from exc
    return module
