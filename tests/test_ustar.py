"""The strict ustar reader on crafted streams: only allowed regular files, caps, a deadline."""

from __future__ import annotations

import io
import tarfile
import time
from pathlib import Path

import pytest

from grader.sandboxing.ustar import BLOCK, UnsafeArchiveError, extract_results

ALLOWED = frozenset({"worker.json", "p/exit.json", "p/p0.json", "p/p0.safetensors"})


def member(name: str, data: bytes = b"abc", kind: bytes = tarfile.REGTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, len(data) if kind == tarfile.REGTYPE else 0
    return info


def archive(*members: tuple[str, bytes], fmt: int = tarfile.USTAR_FORMAT) -> bytes:
    """What the worker writes: tarfile in mode "w", ustar, padded to a record."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
        for name, data in members:
            tar.addfile(member(name, data), io.BytesIO(data))
    return buf.getvalue()


def raw(info: tarfile.TarInfo, data: bytes = b"") -> bytes:
    """One member exactly as given, header and padded data, then the end of the archive."""
    return info.tobuf(tarfile.USTAR_FORMAT) + data + bytes(-len(data) % BLOCK) + bytes(2 * BLOCK)


def patched(start: int, value: bytes) -> bytes:
    """A header for worker.json with one field replaced and the checksum made right again,
    then its data and the end of the archive."""
    header = bytearray(member("worker.json").tobuf(tarfile.USTAR_FORMAT))
    header[start : start + len(value)] = value
    header[148:156] = b"        "
    header[148:155] = b"%06o\0" % sum(header)
    return bytes(header) + b"abc".ljust(BLOCK, b"\0") + bytes(2 * BLOCK)


def extract(stream: bytes, dest: Path, seconds: float = 10.0) -> None:
    extract_results(
        io.BytesIO(stream),
        dest,
        ALLOWED,
        max_bytes=1000,
        max_file_bytes=600,
        max_members=3,
        seconds=seconds,
    )


def test_the_workers_stream_is_extracted(tmp_path: Path) -> None:
    extract(archive(("worker.json", b"{}"), ("p/p0.json", b"x" * 600)), tmp_path)
    assert (tmp_path / "worker.json").read_bytes() == b"{}"
    assert (tmp_path / "p" / "p0.json").read_bytes() == b"x" * 600
    assert (tmp_path / "p" / "p0.json").stat().st_mode & 0o777 == 0o644


def test_a_stream_cut_at_a_member_boundary_keeps_what_arrived(tmp_path: Path) -> None:
    whole = archive(("worker.json", b"{}"), ("p/p0.json", b"[]"))
    extract(whole[: 2 * BLOCK], tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["worker.json"]


def test_pax_bomb_is_rejected_at_once(tmp_path: Path) -> None:
    """CVE-2024-6232: tarfile spends hours on an 8 MiB pax header of digits."""
    bomb = member("p/p0.json", kind=tarfile.XHDTYPE)
    bomb.size = 8 << 20
    stream = bomb.tobuf(tarfile.USTAR_FORMAT) + b"9" * bomb.size
    start = time.thread_time()  # this thread's CPU: the attack's cost, whatever the load
    with pytest.raises(UnsafeArchiveError, match="not a regular file"):
        extract(stream, tmp_path)
    assert time.thread_time() - start < 0.5
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("info", "message"),
    [
        (member("p/p0.json", kind=tarfile.SYMTYPE), "not a regular file"),
        (member("p/p0.json", kind=tarfile.LNKTYPE), "not a regular file"),
        (member("p", kind=tarfile.DIRTYPE), "not a regular file"),
        (member("p/p0.json", kind=tarfile.GNUTYPE_LONGNAME), "not a regular file"),
        (member("p/p0.json", kind=tarfile.XGLTYPE), "not a regular file"),
        (member("p/p0.json", kind=tarfile.CHRTYPE), "not a regular file"),
        (member("p/p0.json", kind=tarfile.AREGTYPE), "not a regular file"),
        (member("p/p1.json"), "unexpected member"),
        (member("../worker.json"), "unexpected member"),
        (member("/worker.json"), "unexpected member"),
        (member("p/p0.json", b"x" * 601), "file cap"),
    ],
)
def test_anything_but_an_allowed_regular_file_is_rejected(
    tmp_path: Path, info: tarfile.TarInfo, message: str
) -> None:
    with pytest.raises(UnsafeArchiveError, match=message):
        extract(raw(info, b"x" * info.size), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_link_target_or_name_prefix_is_rejected(tmp_path: Path) -> None:
    info = member("worker.json", kind=tarfile.REGTYPE)
    info.linkname = "/etc/passwd"
    with pytest.raises(UnsafeArchiveError, match="link name"):
        extract(raw(info, b"abc"), tmp_path)
    with pytest.raises(UnsafeArchiveError, match="prefix"):
        extract(patched(345, b"../"), tmp_path)


@pytest.mark.parametrize(
    ("start", "value", "message"),
    [
        (257, b"ustar  \0", "not a ustar"),  # the GNU magic
        (124, b"\x80" + bytes(10) + b"\1", "size field"),  # base-256 size
        (124, b"12345678999\0", "size field"),  # not octal
        (0, "wörker.json".encode(), "bad member name"),
    ],
)
def test_malformed_headers_are_rejected(
    tmp_path: Path, start: int, value: bytes, message: str
) -> None:
    with pytest.raises(UnsafeArchiveError, match=message):
        extract(patched(start, value), tmp_path)
    stream = bytearray(patched(0, b""))
    stream[148:154] = b"000000"
    with pytest.raises(UnsafeArchiveError, match="checksum"):
        extract(bytes(stream), tmp_path)


def test_caps_on_members_total_and_duplicates(tmp_path: Path) -> None:
    with pytest.raises(UnsafeArchiveError, match="1000-byte cap"):
        extract(archive(("p/p0.json", b"x" * 600), ("p/p0.safetensors", b"x" * 401)), tmp_path)
    with pytest.raises(UnsafeArchiveError, match="twice"):
        extract(archive(("worker.json", b"{}"), ("worker.json", b"{}")), tmp_path / "x")
    four = [(name, b"") for name in sorted(ALLOWED)]
    with pytest.raises(UnsafeArchiveError, match="more than 3 members"):
        extract(archive(*four), tmp_path / "y")


def test_truncated_member_is_removed(tmp_path: Path) -> None:
    whole = archive(("p/p0.json", b"x" * 500))
    with pytest.raises(UnsafeArchiveError, match=r"ended inside 'p/p0\.json'"):
        extract(whole[:700], tmp_path)
    assert not (tmp_path / "p" / "p0.json").exists()
    with pytest.raises(UnsafeArchiveError, match="inside a header"):
        extract(whole[:100], tmp_path)


def test_data_after_the_end_and_garbage_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(UnsafeArchiveError, match="after the end"):
        extract(archive(("worker.json", b"{}")) + b"\1", tmp_path)
    with pytest.raises(UnsafeArchiveError, match="checksum"):
        extract(b"hello, this is not a tar" * 100, tmp_path / "x")


def test_the_deadline_bounds_the_extraction(tmp_path: Path) -> None:
    with pytest.raises(UnsafeArchiveError, match="too long"):
        extract(archive(("worker.json", b"{}")), tmp_path, seconds=-1.0)


def test_a_planted_file_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "p0.json").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeArchiveError, match="exists already"):
        extract(archive(("p/p0.json", b"evil")), tmp_path)
    assert not (tmp_path / "elsewhere").exists()
