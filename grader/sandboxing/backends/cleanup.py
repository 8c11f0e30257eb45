"""The sandbox containers a backend makes, removed by label whatever its threads are doing; and
SIGTERM made an exception like Ctrl-C.

Each backend labels its containers with a run id of its own (`Run`). A stop never waits on the
engine: every call that makes, starts, waits on or removes a container runs in a thread of its
own (`Run.call`), and a thread waiting for it goes on at once when its batch is stopped; what an
abandoned call made is removed once the call returns. Closing the backend, the process's exit and
a forced stop (`signals.force_stop`) then give the calls in flight a bounded time to return and
remove every container that carries the run's label, as the engine lists them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable
from types import FrameType
from typing import Generic, TypeVar

from grader.sandboxing.backends.base import STOPPED
from grader.sandboxing.engine import (
    LABEL,
    RUN_LABEL,
    DockerError,
    labelled_containers,
    remove_containers,
)

T = TypeVar("T")

POLL_SECONDS = 0.05
"""How often a thread waiting on the engine looks at its batch's stop."""
SETTLE_SECONDS = 5.0
"""Time a sweep waits for the engine calls in flight to return, so as to find what they made."""

_lock = threading.Lock()
_runs: set[Run] = set()
_installed = False


class Stopped(DockerError):
    """The batch was stopped while a call to the engine was in flight: it was abandoned."""

    def __init__(self) -> None:
        super().__init__(STOPPED)


class _Call(threading.Thread, Generic[T]):
    """One engine call, in a daemon thread: what it returned or raised, and whether the thread
    that waited for it went on without it (then container `undo` is removed once it returns)."""

    def __init__(self, run: Run, fn: Callable[[], T], undo: str | None) -> None:
        super().__init__(name="grader-engine", daemon=True)
        self.run_of, self.fn, self.undo = run, fn, undo
        self.result: list[T] = []
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.abandoned = False
        self.lock = threading.Lock()

    def run(self) -> None:
        try:
            self.result.append(self.fn())
        except BaseException as exc:  # raised again in the waiting thread
            self.error = exc
        with self.lock:
            self.done.set()
            undo = self.undo if self.abandoned else None
        try:
            if undo is not None:
                remove_containers([undo])
        finally:
            self.run_of.ended()

    def abandon(self) -> bool:
        """Leave the call to finish alone; False when it had returned already."""
        with self.lock:
            self.abandoned = not self.done.is_set()
            return self.abandoned


class Run:
    """The containers of one backend: the labels they carry, the engine calls in flight for
    them, and their removal by label."""

    def __init__(self) -> None:
        self.id = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        """The process's id first, so that what a process made can be told from outside."""
        self.labels = {LABEL: "1", RUN_LABEL: self.id}
        self._calls = 0
        self._idle = threading.Condition()

    def call(self, fn: Callable[[], T], stop: threading.Event, undo: str | None = None) -> T:
        """`fn()`, a call to the engine, waited for until it returns, or until `stop` is set:
        then `Stopped` is raised at once, and container `undo` (what the call makes or starts)
        is removed once the call returns. Nothing is called when `stop` is set already but a
        removal (`undo` None), which goes on in the background."""
        if stop.is_set() and undo is not None:
            raise Stopped
        with self._idle:
            self._calls += 1
        with _lock:
            _runs.add(self)
        call = _Call(self, fn, undo)
        call.start()
        while not call.done.is_set():
            if stop.is_set() and call.abandon():
                raise Stopped
            call.done.wait(POLL_SECONDS)
        if call.error is not None:
            raise call.error
        return call.result[0]

    def remove(self, name: str, stop: threading.Event) -> None:
        """Remove container `name`; once `stop` is set, without waiting for the engine."""
        with contextlib.suppress(Stopped):
            self.call(lambda: remove_containers([name]), stop)

    def ended(self) -> None:
        with self._idle:
            self._calls -= 1
            self._idle.notify_all()

    def sweep(self, settle: float = SETTLE_SECONDS) -> None:
        """Remove every container that carries this run's label, once the calls in flight have
        returned or `settle` seconds have passed (those left remove what they make)."""
        with self._idle:
            settled = self._idle.wait_for(lambda: self._calls == 0, max(settle, 0))
        with _lock:
            if self not in _runs:
                return  # it never called the engine, or was swept once settled
            if settled:
                _runs.discard(self)
        with contextlib.suppress(DockerError):
            remove_at_once(labelled_containers(RUN_LABEL, self.id))


def remove_at_once(ids: list[str]) -> None:
    """Remove containers each in a thread of its own: one slow removal holds up no other."""
    started = []
    for cid in ids:
        remover = threading.Thread(target=remove_containers, args=([cid],))
        try:
            remover.start()
        except RuntimeError:  # no new thread during the interpreter's exit
            remove_containers([cid])
        else:
            started.append(remover)
    for remover in started:
        remover.join()


def remove_active(settle: float = SETTLE_SECONDS) -> None:
    """Remove the containers of every run of this process that was not swept once settled,
    within about `settle` seconds for the calls in flight (at exit, and on a forced stop)."""
    deadline = time.monotonic() + settle
    with _lock:
        runs = list(_runs)
    for run in runs:
        run.sweep(deadline - time.monotonic())


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
