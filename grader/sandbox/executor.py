"""The sandbox worker's probe executor, loaded on the host to run trusted reference code.

The host runs its reference solutions through the same executor the sandbox runs candidate
code with, so both sides of every comparison are produced the same way.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import torch

from grader.courses.paths import WORKER_FILE

_spec = importlib.util.spec_from_file_location("attention_grader_worker", WORKER_FILE)
assert _spec is not None and _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

ProbeRunner = Callable[
    [dict[str, Any], dict[str, Any], dict[str, torch.Tensor]],
    tuple[dict[str, Any], dict[str, torch.Tensor]],
]

run_probe: ProbeRunner = _module.run_probe
PROTOCOL_VERSION: int = _module.PROTOCOL_VERSION
