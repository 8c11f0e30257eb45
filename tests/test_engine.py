"""The engine's client without an engine, the attach stream's demultiplexing, and a container
start the engine failed."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from docker.errors import APIError

from grader.sandboxing.backends import docker
from grader.sandboxing.backends.cleanup import Run
from grader.sandboxing.backends.streams import HEADER, Demux
from grader.sandboxing.engine import DockerError, client, engine_reachable


def test_no_engine_is_one_line_and_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    assert not engine_reachable()
    with pytest.raises(DockerError) as caught:
        client()
    message = str(caught.value)
    assert "timed out" not in message.lower()  # refused at once: nothing waited for
    assert message.startswith(f"no docker engine answers at unix://{tmp_path}/no-engine.sock")
    assert "\n" not in message


def test_the_attach_stream_splits_whatever_its_chunks() -> None:
    """Headers and payloads cut anywhere, empty frames too: the pieces add up per stream."""
    rng = random.Random(7)
    frames = [(rng.choice([1, 2]), rng.randbytes(rng.randrange(0, 3000))) for _ in range(200)]
    stream = b"".join(HEADER.pack(kind, len(data)) + data for kind, data in frames)
    cuts = sorted(rng.sample(range(1, len(stream)), 400))
    demux = Demux()
    pieces = [
        piece
        for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True)
        for piece in demux.split(stream[start:end])
    ]
    for is_stdout in (True, False):
        sent = b"".join(data for kind, data in frames if (kind == 1) == is_stdout)
        assert b"".join(data for out, data in pieces if out == is_stdout) == sent


class FlakyContainers:
    """Containers whose start the engine fails `failures` times, as a runtime hook killed on a
    loaded machine made it fail: `error running hook: signal: killed`."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.created: list[str] = []

    def create(self, image: str, command: list[str], **options: object) -> FlakyContainers:
        self.created.append(f"c{len(self.created)}")
        self.id = self.created[-1]
        return self

    def start(self) -> None:
        if self.failures:
            self.failures -= 1
            raise APIError("500 Server Error", explanation="error running hook: signal: killed")


class FakeStreams:
    def __init__(self, container: object) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("failures", [0, 2, 3])
def test_a_start_the_engine_failed_is_tried_again_with_a_new_container(
    monkeypatch: pytest.MonkeyPatch, failures: int
) -> None:
    containers, removed = FlakyContainers(failures), list[str]()
    monkeypatch.setattr(docker, "client", lambda: SimpleNamespace(containers=containers))
    monkeypatch.setattr(docker, "Streams", FakeStreams)
    monkeypatch.setattr(docker, "remove_containers", removed.extend)
    monkeypatch.setattr(time, "sleep", lambda seconds: None)
    if failures < docker.START_ATTEMPTS:
        container, streams = docker.start_container(
            "image", ["python3"], {"name": "n"}, Run(), threading.Event()
        )
        assert cast(FlakyContainers, container).id == containers.created[-1]
        assert len(containers.created) == failures + 1
        assert removed == containers.created[:-1] and not cast(FakeStreams, streams).closed
    else:
        with pytest.raises(DockerError, match="container did not start: error running hook"):
            docker.start_container("image", ["python3"], {"name": "n"}, Run(), threading.Event())
        assert len(containers.created) == docker.START_ATTEMPTS
