"""A container's standard streams over the engine's attach socket: stdin one way, stdout and
stderr the other, each piece of them behind an 8-byte header (stream, three zero bytes, u32
big-endian size). Attached before the container starts, so that nothing it writes is lost."""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import struct

from docker.models.containers import Container

from grader.sandboxing.engine import DockerError, engine_errors

HEADER = struct.Struct(">BxxxI")
STDOUT = 1
_CHUNK = 1 << 16
_PARAMS = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}


class Demux:
    """Splits the attach stream into (is stdout, bytes) pieces, whatever chunks it arrives in."""

    def __init__(self) -> None:
        self._header = bytearray()
        self._stream = 0
        self._left = 0

    def split(self, chunk: bytes) -> list[tuple[bool, bytes]]:
        pieces: list[tuple[bool, bytes]] = []
        view = memoryview(chunk)
        while view:
            if self._left == 0:
                need = HEADER.size - len(self._header)
                self._header += view[:need]
                view = view[need:]
                if len(self._header) == HEADER.size:
                    self._stream, self._left = HEADER.unpack(self._header)
                    self._header.clear()
                continue
            piece = view[: self._left]
            pieces.append((self._stream == STDOUT, bytes(piece)))
            self._left -= len(piece)
            view = view[len(piece) :]
        return pieces


class Streams:
    """Writes to a created container's stdin and reads its stdout and stderr, demultiplexed."""

    def __init__(self, container: Container) -> None:
        with engine_errors("cannot attach to the container"):
            self._raw = container.attach_socket(params=_PARAMS)
        sock = getattr(self._raw, "_sock", self._raw)
        if not isinstance(sock, socket.socket):
            self._raw.close()
            raise DockerError("cannot attach to the container over this DOCKER_HOST")
        sock.settimeout(None)
        self.sock = sock
        self._demux = Demux()

    def send(self, data: bytes, timeout: float | None = None) -> None:
        """Write `data` to the container's stdin (`TimeoutError` after `timeout` seconds)."""
        self.sock.settimeout(timeout)
        try:
            self.sock.sendall(data)
        finally:
            self.sock.settimeout(None)

    def end_input(self) -> None:
        """Close the container's stdin: its reader sees the end of the stream."""
        self.sock.shutdown(socket.SHUT_WR)

    def read(self, timeout: float | None) -> list[tuple[bool, bytes]] | None:
        """What arrived within `timeout` seconds (None: wait for it) as (is stdout, bytes)
        pieces, in order; None once the container's streams ended."""
        pending = isinstance(self.sock, ssl.SSLSocket) and self.sock.pending()
        if not pending and not select.select([self.sock], [], [], timeout)[0]:
            return []
        chunk = self.sock.recv(_CHUNK)
        return self._demux.split(chunk) if chunk else None

    def close(self) -> None:
        """Drop the connection (a reader waiting on it wakes up to the end of the stream)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        for held in (self.sock, self._raw):
            with contextlib.suppress(OSError):
                held.close()
