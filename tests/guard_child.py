"""Arms the sandbox's policy guard in this process, as a problem's child does, then calls each
route of tests/hostile/guard_routes/routes.py named on the command line and prints a JSON line
for each: whether it ran or was refused, the calls traced and the guard's events.

Usage: python -m tests.guard_child REFUSED-FAMILIES ROUTE... (families comma-separated); with
OLD_TORCH=1 in the environment, as on a torch without `torch.library.get_kernel` nor a keyset
handed to a kernel (torch 2.2)."""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any

import torch

from sandbox.guard import GUARD
from sandbox.policy import Refused
from tests.conftest import ROOT

ROUTES = ROOT / "tests" / "hostile" / "guard_routes"


def main(argv: list[str]) -> None:
    old = bool(os.environ.get("OLD_TORCH"))
    if old:
        del torch.library.get_kernel
    GUARD.install()
    if old:  # the guard's own kernels, registered when it is armed, as on torch 2.2
        impl = torch.library.Library.impl

        def impl_without_keyset(self: Any, name: Any, fn: Any, key: str = "", **more: Any) -> Any:
            if "with_keyset" in more:  # torch 2.2 hands a kernel no keyset
                raise TypeError("impl() got an unexpected keyword argument 'with_keyset'")
            return impl(self, name, fn, key, **more)  # type: ignore[no-untyped-call]

        torch.library.Library.impl = impl_without_keyset  # type: ignore[assignment,method-assign]
    sys.path.append(str(ROUTES))
    routes: dict[str, bytes | None] = {str(ROUTES / "routes.py"): None}  # the problem's file
    GUARD.arm([f for f in argv[0].split(",") if f], str(ROUTES), routes)
    module = importlib.import_module("routes")
    query = torch.randn(1, 2, 3, 4, dtype=torch.float64, requires_grad=True)
    for name in argv[1:]:
        GUARD.trace.clear()
        try:
            getattr(module, name)(query)
            outcome = "ran"
        except Refused:
            outcome = "refused"
        except Exception as exc:  # what the route itself raised
            outcome = f"raised {type(exc).__name__}"
        events = GUARD.take_events() + GUARD.check(full=True)
        line = {"route": name, "outcome": outcome, "trace": GUARD.trace, "events": events}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
