"""Staging copies regular Python files only, and hashes what it copied."""

from __future__ import annotations

import os
from pathlib import Path

from grader.sandbox.staging import MAX_FILE_BYTES, stage_submission


def test_links_and_large_files_are_left_out(tmp_path: Path) -> None:
    source = tmp_path / "sub"
    (source / "helpers").mkdir(parents=True)
    (source / "split_heads.py").write_text("x = 1\n")
    (source / "helpers" / "util.py").write_text("y = 2\n")
    (source / "big.py").write_text("#" * (MAX_FILE_BYTES + 1))
    (tmp_path / "secret.py").write_text("TOKEN = 'host secret'\n")
    os.symlink(tmp_path / "secret.py", source / "link.py")
    (source / "notes.txt").write_text("not python")
    staged = stage_submission(source, tmp_path / "staged")
    copied = sorted(str(p.relative_to(staged.path)) for p in staged.path.rglob("*") if p.is_file())
    assert copied == ["helpers/util.py", "split_heads.py"]
    assert staged.sources == {"helpers/util.py": "y = 2\n", "split_heads.py": "x = 1\n"}
    assert any("link.py" in n for n in staged.notes)
    assert any("big.py" in n for n in staged.notes)


def test_hash_follows_content(tmp_path: Path) -> None:
    source = tmp_path / "sub"
    source.mkdir()
    (source / "a.py").write_text("x = 1\n")
    first = stage_submission(source, tmp_path / "s1").content_hash
    assert stage_submission(source, tmp_path / "s2").content_hash == first
    (source / "a.py").write_text("x = 2\n")
    assert stage_submission(source, tmp_path / "s3").content_hash != first
