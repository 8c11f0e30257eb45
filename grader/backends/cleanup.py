"""Remove this process's sandbox containers at exit, on SIGTERM and on Ctrl-C."""

from __future__ import annotations

import atexit
import contextlib
import signal
import threading
from types import FrameType

from grader.backends.dockercli import DockerError, remove_containers

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
    remove_active()
    raise SystemExit(128 + signum)


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    remove_active()
    raise KeyboardInterrupt


def install() -> None:
    """Register the atexit hook, and signal handlers where Python's defaults are in place."""
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(remove_active)
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
