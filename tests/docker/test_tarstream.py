"""extract_capped on crafted streams (no docker needed)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from grader.backends.tarstream import UnsafeArchiveError, extract_capped

CAPS = {"max_bytes": 1000, "max_file_bytes": 600, "max_members": 5}


def archive(*members: tuple[tarfile.TarInfo, bytes | None]) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    buf.seek(0)
    return buf


def file(name: str, data: bytes = b"abc", mode: int = 0o600) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.mode = mode
    return info, data


def special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    return info, None


def test_regular_files_and_directories_are_extracted(tmp_path: Path) -> None:
    stream = archive(
        special("./p1", tarfile.DIRTYPE), file("./p1/a.json", b"{}"), file("b.txt", b"x" * 600)
    )
    extract_capped(stream, tmp_path, **CAPS)
    assert (tmp_path / "p1" / "a.json").read_bytes() == b"{}"
    assert (tmp_path / "b.txt").read_bytes() == b"x" * 600
    assert (tmp_path / "p1" / "a.json").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([file("/etc/evil")], "absolute"),
        ([file("../evil")], "'..'"),
        ([file("a/../../evil")], "'..'"),
        ([special("link", tarfile.SYMTYPE, "/etc")], "not a regular file"),
        ([special("hard", tarfile.LNKTYPE, "/etc/passwd")], "not a regular file"),
        ([special("dev", tarfile.CHRTYPE)], "not a regular file"),
        ([special("fifo", tarfile.FIFOTYPE)], "not a regular file"),
        ([file("big", b"x" * 601)], "file cap"),
        ([file("a", b"x" * 600), file("b", b"x" * 401)], "1000-byte cap"),
        ([file(f"f{i}") for i in range(6)], "more than 5 members"),
        ([file("same"), file("same")], "extracted twice"),
        ([file("f"), file("f/inner")], "not a directory"),
    ],
)
def test_unsafe_or_oversized_streams_are_rejected(
    tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], message: str
) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(UnsafeArchiveError, match=message):
        extract_capped(archive(*members), dest, **CAPS)
    assert not (tmp_path / "evil").exists()


def test_garbage_and_truncated_streams_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(UnsafeArchiveError):
        extract_capped(io.BytesIO(b"hello, this is not a tar" * 100), tmp_path, **CAPS)
    whole = archive(file("a", b"x" * 500)).getvalue()
    with pytest.raises(UnsafeArchiveError, match=r"ended inside|malformed"):
        extract_capped(io.BytesIO(whole[:700]), tmp_path, **CAPS)


def test_symlink_planted_in_dest_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "p1").symlink_to(outside)
    with pytest.raises(UnsafeArchiveError, match="not a directory"):
        extract_capped(archive(file("p1/x")), dest, **CAPS)
    assert list(outside.iterdir()) == []
