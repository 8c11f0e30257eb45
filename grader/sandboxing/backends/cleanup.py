"""Remove this process's sandbox containers at exit, and make SIGTERM an exception like Ctrl-C.

A signal raises in the main thread (KeyboardInterrupt, SystemExit); `Grader.grade_many` then
stops its workers, which kill and remove their own containers before it propagates. What is
still registered at exit is force-removed.
"""

from __future__ import annotations

import atexit
import contextlib
import signal
import threading
from types import FrameType

from grader.sandboxing.engine import DockerError, remove_containers

_lock = threading.Lock()
_active: set[str] = set()
_installed = False


def register(name: str) -> None:
    with _lock:
        _active.add(name)


def unregister(name: str) -> None:
    with _lock:
        _active.discard(name)


def remove_active() -> None:
    """Force-remove every container this process started and has not removed yet."""
    with _lock:
        names = sorted(_active)
        _active.clear()
    with contextlib.suppress(DockerError):
        remove_containers(names)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def install() -> None:
    """Register the atexit hook, and a SIGTERM handler where Python's default is in place."""
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(remove_active)
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)
