"""A stop never waits on the engine: a batch on the Docker backends, whose engine holds every
container's creation (as a loaded machine's engine does for seconds), stops at once on Ctrl-C,
and what the engine creates after the stop is removed."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.models import Student
from grader.sandboxing.backends import cleanup, docker, warm
from grader.sandboxing.backends.base import Limits
from grader.sandboxing.engine import LABEL, RUN_LABEL, DockerError

ROOT = Path(__file__).parent.parent
LOOP = ROOT / "tests" / "hostile" / "infinite_loop"
HELD_SECONDS = 3.0
"""How long the engine holds each creation: longer than a stop may take, shorter than a sweep
waits for the calls in flight."""


class SlowEngine:
    """An engine whose container creations each take `HELD_SECONDS`; it starts nothing."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.labels: dict[str, dict[str, str]] = {}  # by name, the containers it holds
        self.entered = threading.Semaphore(0)
        self.started: list[str] = []

    def create(self, image: str, command: list[str], **options: Any) -> Any:
        self.entered.release()
        time.sleep(HELD_SECONDS)
        name = options["name"]
        with self.lock:
            self.labels[name] = options["labels"]
        return SimpleNamespace(id=name, start=lambda: self.started.append(name))

    def remove(self, names: list[str]) -> None:
        with self.lock:
            for name in names:
                self.labels.pop(name, None)

    def labelled(self, label: str, value: str | None = None) -> list[str]:
        with self.lock:
            return [n for n, held in self.labels.items() if held.get(label) == value]


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt, as at a terminal, whatever ran the tests (a shell's
    background job ignores it, and Python then installs no handler)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowEngine]:
    slow = SlowEngine()
    monkeypatch.setattr(docker, "client", lambda: SimpleNamespace(containers=slow))
    monkeypatch.setattr(docker, "remove_containers", slow.remove)
    monkeypatch.setattr(cleanup, "remove_containers", slow.remove)
    monkeypatch.setattr(cleanup, "labelled_containers", slow.labelled)
    monkeypatch.setattr(docker, "image_facts", lambda tag: (_ for _ in ()).throw(DockerError()))
    yield slow


class Lookup(dict[Path, Student]):
    """A batch's students (none known), whose first lookup says the batch hands its
    submissions out."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = threading.Event()

    def __bool__(self) -> bool:
        return True

    def get(self, key: Path, default: Any = None) -> Any:
        self.asked.set()
        return default

    def wait(self) -> None:
        self.asked.wait()


Sandbox = docker.DockerBackend | warm.WarmBackend


def throw_away(jobs: int) -> Sandbox:
    return docker.DockerBackend("image")


def warm_pool(jobs: int) -> Sandbox:
    return warm.WarmBackend("image", ready=Limits(), workers=jobs)


@pytest.mark.parametrize("make", [throw_away, warm_pool])
@pytest.mark.usefixtures("ctrl_c_raises")
def test_ctrl_c_while_the_engine_creates_stops_at_once_and_leaves_no_container(
    engine: SlowEngine, catalog: Catalog, make: Callable[[int], Sandbox]
) -> None:
    """Ctrl-C while two containers are being created (a throw-away one per submission, or the
    warm pool's, started ahead): the batch stops and the backend closes without waiting for the
    engine, no container is started, and the two the engine creates after the stop are gone
    once it has; another grader's container stays."""
    engine.labels["another grader's"] = {LABEL: "1", RUN_LABEL: "1-0123456789ab"}
    backend = make(2)
    grader = Grader(catalog, catalog.select(["causal_self_attention"]), backend, seed=0)
    interrupted: list[float] = []
    handing_out = Lookup()

    def ctrl_c_once_both_are_being_created() -> None:
        for _ in range(2):
            engine.entered.acquire()
        handing_out.wait()
        interrupted.append(time.monotonic())
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    threading.Thread(target=ctrl_c_once_both_are_being_created, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        grader.grade_many([LOOP, LOOP, LOOP], jobs=2, students=handing_out)
    assert time.monotonic() - interrupted[0] < 1.0
    assert engine.labelled(RUN_LABEL, backend.sandbox.run.id) == [] and engine.started == []
    closing = time.monotonic()
    grader.close()  # the sweep waits for the engine's calls in flight, then removes by label
    assert time.monotonic() - closing < cleanup.SETTLE_SECONDS
    assert list(engine.labels) == ["another grader's"]
    assert engine.started == []
