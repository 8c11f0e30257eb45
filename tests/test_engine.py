"""The engine's client without an engine, and the attach stream's demultiplexing."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from grader.sandbox.backends.streams import HEADER, Demux
from grader.sandbox.engine import DockerError, client, engine_reachable


def test_no_engine_is_one_line_and_fast(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    start = time.monotonic()
    assert not engine_reachable()
    assert time.monotonic() - start < 2
    with pytest.raises(DockerError) as caught:
        client()
    message = str(caught.value)
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
