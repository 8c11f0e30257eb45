"""Text the candidate's code chose (exception messages and class names, reprs, code lines) and
the candidate-facing view, which leaves it out: a visible check's message must never carry
what the candidate's code read inside the sandbox (the job, hidden probes) back out.

Messages are composed once for instructors; where one used the candidate's text, it is
composed again under `public()`, and that text is what candidate-facing outputs show.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_public: ContextVar[bool] = ContextVar("public", default=False)
_used: ContextVar[list[bool] | None] = ContextVar("used", default=None)

# Names a candidate cannot forge into a message: Python's own exception and value types.
BUILTIN_NAMES = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and not name.startswith("_")
} | {"NoneType"}


def own(full: str, public: str) -> str:
    """`full` for instructors, `public` in a candidate-facing message."""
    used = _used.get()
    if used is not None:
        used.append(True)
    return public if _public.get() else full


def own_type(name: str, what: str) -> str:
    """A class name the candidate's code may have chosen: shown to them only if built in."""
    return own(name, name if name in BUILTIN_NAMES else f"{what} of its own class")


@contextmanager
def tracking() -> Iterator[list[bool]]:
    """Notes whether anything composed inside used the candidate's own text."""
    used: list[bool] = []
    token = _used.set(used)
    try:
        yield used
    finally:
        _used.reset(token)


@contextmanager
def public() -> Iterator[None]:
    token = _public.set(True)
    try:
        yield
    finally:
        _public.reset(token)
