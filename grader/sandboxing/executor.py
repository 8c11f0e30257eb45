"""The worker's probe executor, run on the host on the grader's trusted reference code.

The host runs its reference solutions through the same executor the sandbox runs candidate
code with, so both sides of every comparison are produced the same way.
"""

from __future__ import annotations

import torch

from sandbox.probes import run_probe
from sandbox.protocol import PROTOCOL_VERSION, Namespace, Probe, ProbeData

__all__ = ["PROTOCOL_VERSION", "run_reference"]


def run_reference(
    namespace: Namespace, probe: Probe, inputs: dict[str, torch.Tensor]
) -> tuple[ProbeData, dict[str, torch.Tensor]]:
    """Run one probe on the reference in `namespace`; an interrupt propagates."""
    return run_probe(namespace, probe, inputs, "host")
