"""Staging copies regular Python files only, within its limits, and hashes what it copied."""

from __future__ import annotations

import os
from pathlib import Path

from grader.sandboxing.staging import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_NAME_BYTES,
    MAX_PATH_BYTES,
    MAX_TOTAL_BYTES,
    content_hash,
    stage_submission,
)


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
    assert staged.sources == {"helpers/util.py": b"y = 2\n", "split_heads.py": b"x = 1\n"}
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


def deep_chain(root: Path, depth: int) -> list[Path]:
    """`depth` nested folders under `root`, made one by one (os.makedirs recurses)."""
    chain = [root / "d"]
    for _ in range(depth - 1):
        chain.append(chain[-1] / "d")
    for folder in chain:
        os.mkdir(folder)
    return chain


def remove_chain(chain: list[Path]) -> None:
    """Remove what `deep_chain` made, deepest first (shutil.rmtree recurses)."""
    for folder in reversed(chain):
        for entry in folder.iterdir():
            if not entry.is_dir():
                entry.unlink()
        os.rmdir(folder)


def test_a_deep_tree_is_walked_without_recursion(tmp_path: Path) -> None:
    source = tmp_path / "sub"
    source.mkdir()
    (source / "split_heads.py").write_text("x = 1\n")
    chain = deep_chain(source, 1100)
    try:
        (chain[MAX_DEPTH - 1] / "ok.py").write_text("y = 2\n")
        (chain[MAX_DEPTH] / "deep.py").write_text("z = 3\n")
        (chain[-1] / "bottom.py").write_text("z = 4\n")
        staged = stage_submission(source, tmp_path / "staged")
        assert content_hash(source) == staged.content_hash
    finally:
        remove_chain(chain)
    assert list(staged.sources) == ["split_heads.py", "d/" * MAX_DEPTH + "ok.py"]
    assert staged.notes == [f"folder {'d/' * MAX_DEPTH}d: over {MAX_DEPTH} folders deep; left out"]


def test_names_and_paths_over_the_limits_are_left_out(tmp_path: Path) -> None:
    source = tmp_path / "sub"
    long_folder = source / ("f" * (MAX_NAME_BYTES + 1))
    long_folder.mkdir(parents=True)
    (long_folder / "helper.py").write_text("x = 1\n")
    (source / ("m" * 100 + ".py")).write_text("x = 1\n")  # 103 bytes
    (source / ("é" * 48 + ".py")).write_text("x = 1\n")  # 99 bytes of UTF-8: kept
    deep = source / "/".join(["p" * 60] * 3)  # 182 bytes, then a file over 200
    deep.mkdir(parents=True)
    (deep / ("q" * 20 + ".py")).write_text("x = 1\n")
    (source / os.fsdecode(b"bad\xff.py")).write_text("x = 1\n")
    staged = stage_submission(source, tmp_path / "staged")
    assert list(staged.sources) == ["é" * 48 + ".py"]
    assert staged.left_out == {
        "bad\\xff.py": "its name is not UTF-8",
        "m" * 100 + ".py": f"its name is over {MAX_NAME_BYTES} bytes",
        f"{deep.relative_to(source)}/{'q' * 20}.py": f"its path is over {MAX_PATH_BYTES} bytes",
    }
    assert any(n.startswith("folder fff") and "over 100 bytes" in n for n in staged.notes)


def test_the_submission_is_capped_in_total_and_in_files(tmp_path: Path) -> None:
    """70 MB of small files would fill the sandbox's /tmp: 4 MiB are staged, the rest noted."""
    source = tmp_path / "sub"
    source.mkdir()
    chunk = "#" * (MAX_FILE_BYTES - 100) + "\n"
    for i in range(6):
        (source / f"part{i}.py").write_text(chunk)
    staged = stage_submission(source, tmp_path / "staged")
    assert list(staged.sources) == [f"part{i}.py" for i in range(4)]
    assert sum(len(d) for d in staged.sources.values()) <= MAX_TOTAL_BYTES
    why = f"over the {MAX_TOTAL_BYTES >> 20} MiB limit for all files together"
    assert staged.left_out == {"part4.py": why, "part5.py": why}

    many = tmp_path / "many"
    many.mkdir()
    for i in range(MAX_FILES + 15):
        (many / f"m{i:03}.py").write_text("x = 1\n")
    staged = stage_submission(many, tmp_path / "staged_many")
    assert len(staged.sources) == MAX_FILES
    assert len(staged.left_out) == 15
    assert len(staged.notes) == 11 and staged.notes[-1] == "5 more left out"
    assert staged.notes[0] == f"m200.py: over the limit of {MAX_FILES} Python files; left out"
