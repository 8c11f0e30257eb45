"""The result stream to the host: a ustar archive on a pipe, or in frames (warm workers), each
file sent as soon as it is final.
"""

from __future__ import annotations

import os
import struct
import tarfile
from pathlib import Path
from typing import IO, cast

from sandbox.folders import remove
from sandbox.protocol import RESULTS_FILE


class PipeWriter:
    """A pipe that counts what it wrote: tarfile's "w" mode asks where it is, never seeks."""

    def __init__(self, fd: int) -> None:
        self.file = os.fdopen(fd, "wb")
        self.position = 0

    def write(self, data: bytes) -> int:
        self.file.write(data)
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        self.file.close()


class FrameWriter:
    """The result stream as D frames on the host's channel (a warm worker's), each of at most
    MAX_FRAME bytes; closing it sends what is left and leaves the channel open."""

    def __init__(self, channel: int) -> None:
        self.channel = channel
        self.buffer = bytearray()
        self.position = 0

    def write(self, data: bytes) -> int:
        self.buffer += data
        self.position += len(data)
        while len(self.buffer) >= MAX_FRAME:
            send_frame(self.channel, b"D", bytes(self.buffer[:MAX_FRAME]))
            del self.buffer[:MAX_FRAME]
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        if self.buffer:
            send_frame(self.channel, b"D", bytes(self.buffer))
            self.buffer.clear()

    def close(self) -> None:
        self.flush()


RESULT_FILES = ("stdout.txt", "stderr.txt", "import.json", RESULTS_FILE, "exit.json")
"""The files of a problem's folder that the worker sends, besides its `started` marker."""


class Emitter:
    """Streams result files to the host as one uncompressed ustar archive on `sink`, each as
    soon as it is final, so that what finished before a crash still arrives."""

    def __init__(self, out: Path, sink: PipeWriter | FrameWriter) -> None:
        self.out = out
        self.file = sink
        # "w", not "w|": the stream mode keeps a partial block back until it is closed
        pipe = cast(IO[bytes], sink)
        self.tar = tarfile.open(fileobj=pipe, mode="w", format=tarfile.USTAR_FORMAT)  # noqa: SIM115

    def send(self, *paths: Path) -> None:
        for path in paths:
            if path.is_file() and not path.is_symlink():
                self.tar.add(path, arcname=str(path.relative_to(self.out)), recursive=False)
        self.file.flush()

    def send_results(self, folder: Path) -> None:
        """A finished problem's files, only the names the worker itself writes, `exit.json` last
        (a problem whose exit arrived is complete); then delete the folder: no later problem
        reads them."""
        found = [p for p in folder.iterdir() if p.name in RESULT_FILES]
        self.send(*sorted(found, key=lambda p: (p.name == "exit.json", p.name)))
        remove(folder)

    def close(self) -> None:
        self.tar.close()
        self.file.close()


FRAME = struct.Struct("<cI")
MAX_FRAME = 1 << 16


def send_frame(fd: int, kind: bytes, payload: bytes) -> None:
    """One frame to the host: a kind byte (R ready, D result stream, E end), a u32 length."""
    data = FRAME.pack(kind, len(payload)) + payload
    while data:
        data = data[os.write(fd, data) :]
