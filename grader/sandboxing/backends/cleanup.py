"""Remove this process's sandbox containers at exit, and stop the process on a signal.

Ctrl-C or SIGTERM raises in the main thread (KeyboardInterrupt, SystemExit); `Grader.grade_many`
then stops its workers, which kill and remove their own containers before it propagates. What is
still registered at exit is force-removed. Should the process still be alive `STOP_SECONDS`
after the signal (or a second signal come), it is stopped by force: its threads' stacks go to
stderr, what is registered is removed, and it exits with the signal's status.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import os
import signal
import sys
import threading
from types import FrameType

from grader.sandboxing.engine import DockerError, remove_containers

STOP_SECONDS = 10.0
"""Time a stopped process has to end on its own before it is stopped by force."""
REMOVE_SECONDS = 10.0
"""Time a forced stop waits for the engine to remove what is registered."""

_lock = threading.Lock()
_active: set[str] = set()
_installed = False
_stopping = threading.Event()


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


def force_stop(status: int) -> None:
    """Stop the process now: its threads' stacks to stderr, what is registered removed (as far
    as the engine answers in time), then exit with `status`."""
    print(f"\nthe grader did not stop within {STOP_SECONDS:g} s: stopping it now", file=sys.stderr)
    faulthandler.dump_traceback(all_threads=True)
    remover = threading.Thread(target=remove_active, daemon=True)
    remover.start()
    remover.join(REMOVE_SECONDS)
    os._exit(status)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    status = 128 + signum
    if _stopping.is_set():
        force_stop(status)
    _stopping.set()
    timer = threading.Timer(STOP_SECONDS, force_stop, (status,))
    timer.daemon = True  # a process that ends in time is not held for it
    timer.start()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(status)


def install() -> None:
    """Register the atexit hook; from the main thread, also take Ctrl-C and SIGTERM over and
    make sure they arrive. SIGTERM is the way a batch is stopped from outside, so it is ours
    even where an ignoring or blocking parent left it off; Ctrl-C where Python's own handler is
    in place (a shell ignores it for a job in the background)."""
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(remove_active)
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, signal.SIG_IGN):
        signal.signal(signal.SIGTERM, _on_signal)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_signal)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
