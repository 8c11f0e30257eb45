"""How the `grader` command stops on Ctrl-C or SIGTERM: at once, and surely.

The first signal raises in the main thread (KeyboardInterrupt, SystemExit with 143), which
stops a batch and removes its containers (`Grader.grade_many`, `cleanup`). A watchdog, started
with the command, then gives the process `STOP_SECONDS` to end; should it still be alive, or a
second signal come, it stops the process by force: the containers that carry its runs' labels
removed, every thread's stack on stderr, and the first signal's status. The handler only writes
a byte to the watchdog's pipe, so that nothing it does can block or fail.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import select
import signal
import sys
import threading
from types import FrameType

STOP_SECONDS = 10.0
"""Time a stopped command has to end on its own before it is stopped by force."""
REMOVE_SECONDS = 10.0
"""Time a forced stop waits for the engine to remove the process's containers."""

_status: int | None = None
_wake = -1


def take() -> None:
    """Take Ctrl-C and SIGTERM over for the command (from its main thread) and make sure they
    arrive: SIGTERM is how a batch is stopped from outside, so it is taken even where an
    ignoring or blocking parent left it off; Ctrl-C where Python's own handler is in place (a
    shell ignores it for a job in the background)."""
    global _wake
    if _wake >= 0 or threading.current_thread() is not threading.main_thread():
        return
    read, _wake = os.pipe()
    threading.Thread(target=_watch, args=(read,), name="grader-stop", daemon=True).start()
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, signal.SIG_IGN):
        signal.signal(signal.SIGTERM, _on_signal)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_signal)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def _on_signal(signum: int, frame: FrameType | None) -> None:
    global _status
    with contextlib.suppress(OSError):
        os.write(_wake, b"!")
    if _status is not None:
        return  # a second signal: the watchdog stops the process now
    _status = 128 + signum
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(_status)


def raise_if_stopped() -> None:
    """Raise again the first signal's exception, should it have been lost: the handler runs
    wherever the main thread is, and one raised within a finaliser (`__del__`, a weakref's
    callback) is printed and dropped, leaving the main thread waiting on a batch of long runs."""
    if _status == 128 + signal.SIGINT:
        raise KeyboardInterrupt
    if _status is not None:
        raise SystemExit(_status)


def _watch(read: int) -> None:
    os.read(read, 1)  # the first signal
    select.select([read], [], [], STOP_SECONDS)  # a second one, or the time
    force_stop(_status or 1)


def force_stop(status: int) -> None:
    """Stop the process now, whatever holds it up: its containers removed (as far as the
    engine answers in time), every thread's stack on stderr, then exit with `status`."""
    try:
        from grader.sandboxing.backends import cleanup

        remover = threading.Thread(target=cleanup.remove_active, daemon=True)
        with contextlib.suppress(RuntimeError):  # no new thread during the interpreter's exit
            remover.start()
            remover.join(REMOVE_SECONDS)
        print(f"\nthe grader did not stop within {STOP_SECONDS:g} s: stopping it now",
              file=sys.stderr, flush=True)  # fmt: skip
        faulthandler.dump_traceback(all_threads=True)
    finally:
        os._exit(status)
