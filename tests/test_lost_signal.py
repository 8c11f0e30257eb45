"""A stop signal whose exception is lost still stops the batch: the handler runs wherever the
main thread is, and an exception raised inside a finaliser (`__del__`, a weakref's callback)
is printed and dropped. The batch's wait then raises it again (`signals.raise_if_stopped`)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.sandboxing import signals
from grader.sandboxing.backends.base import WorkerJob, WorkerRun
from tests.fakes import FakeBackend


class Slow(FakeBackend):
    """A worker that runs until the batch stops (a submission's endless loop)."""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__()
        self.stop = stop
        self.started = threading.Event()

    def run(self, job: WorkerJob) -> WorkerRun:
        self.started.set()
        self.stop.wait(30)
        return super().run(job)


class Swallowed:
    """A finaliser in whose run the signal handler raised: Python drops its exception."""

    def __del__(self) -> None:
        try:
            raise SystemExit(143)  # what `_on_signal` raises, there
        finally:
            signals._status = 143  # the handler's own record of the first signal


@pytest.mark.timeout(60)
def test_a_lost_sigterm_still_stops_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = Catalog()
    problem = catalog.problems["split_heads"]
    folder = tmp_path / "loop"
    folder.mkdir()
    (folder / "split_heads.py").write_text("while True:\n    pass\n")
    stop = threading.Event()
    backend = Slow(stop)
    monkeypatch.setattr(signals, "_status", None)
    with Grader(catalog, [problem], backend, 0) as grader:
        timer = threading.Timer(30, stop.set)
        timer.daemon = True
        timer.start()

        def lose_a_signal() -> None:
            backend.started.wait(20)
            Swallowed()  # dropped at once: its exception is printed, not raised

        threading.Thread(target=lose_a_signal, daemon=True).start()
        start = time.monotonic()
        with pytest.raises(SystemExit) as stopped:
            grader.grade_many([folder], jobs=1)
        stop.set()
        timer.cancel()
    assert stopped.value.code == 143
    assert time.monotonic() - start < 10  # not the 30 s the run would have taken
