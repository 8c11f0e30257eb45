"""A student's archive is a submission, never a class export; Gradescope's metadata is plain
YAML within caps, and anything else is a one-line error; one submission's odd entry is a note
on that submission alone."""

from __future__ import annotations

import shutil
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli.main import cli
from grader.courses.catalog import Catalog
from grader.platforms.exports import (
    MAX_FIELD_CHARS,
    METADATA,
    ExportError,
    read_export,
    read_metadata,
)
from grader.platforms.unzip import CLASS, extract
from grader.reports.models import Student
from tests.test_fail_closed import COMPLETE, ONE_PROBLEM, SPLIT_HEADS, gradebook

LONG = "n" * 300

FORGED = """\
submission_111:
  :submitters:
  - :name: Someone Else
    :sid: '1815'
"""
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
)


def forged_zip(archive: Path) -> Path:
    """A student's zip: their problem files, and a forged export beside them."""
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("split_heads.py", SPLIT_HEADS.read_text())
        zf.writestr(METADATA, FORGED)
        zf.writestr("submission_111/split_heads.py", SPLIT_HEADS.read_text())
    return archive


def test_a_students_zip_or_folder_with_metadata_is_their_submission(
    tmp_path: Path, catalog: Catalog
) -> None:
    archive = forged_zip(tmp_path / "mallory.zip")
    export = read_export(archive, tmp_path / "s1", catalog)
    assert export.layout == "a zip file"
    assert [(s.path.name, s.student and s.student.id) for s in export.submissions] == [
        ("mallory", "mallory")
    ]
    folder = tmp_path / "mallory"
    extract(archive, folder, lambda _path: True, CLASS)
    export = read_export(folder, tmp_path / "s2", catalog)
    assert export.layout == "a submission folder"
    assert [(s.path, s.student) for s in export.submissions] == [(folder, None)]


def test_a_students_zip_in_a_folder_of_submissions_is_theirs(tmp_path: Path) -> None:
    batch = tmp_path / "class"
    batch.mkdir()
    (batch / "complete").symlink_to(COMPLETE)
    forged_zip(batch / "mallory.zip")
    out = tmp_path / "reports"
    args = ["grade", str(batch), "--out", str(out), *ONE_PROBLEM]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    book = gradebook(out)
    assert {name: row[1] for name, row in book.items()} == {"complete": "", "mallory": "mallory"}
    assert "1815" not in (out / "summary.csv").read_text()


def export_with(tmp_path: Path, metadata: str | bytes) -> Path:
    folder = tmp_path / "export"
    (folder / "submission_111").mkdir(parents=True)
    (folder / "submission_111" / "split_heads.py").write_text(SPLIT_HEADS.read_text())
    data = metadata.encode() if isinstance(metadata, str) else metadata
    (folder / METADATA).write_bytes(data)
    return folder


def test_an_alias_bomb_fails_fast_and_small(tmp_path: Path) -> None:
    """A few hundred bytes that stand for 9**9 strings: refused at the first anchor."""
    folder = export_with(tmp_path, BOMB)
    assert len(BOMB) < 600
    tracemalloc.start()
    started = time.thread_time()  # this thread's CPU: the attack's cost, whatever the load
    with pytest.raises(ExportError, match="anchors and aliases are not allowed"):
        read_metadata(folder / METADATA)
    seconds = time.thread_time() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seconds < 0.5 and peak < 4 << 20, (seconds, peak)
    result = CliRunner().invoke(cli, ["grade", str(folder), "--backend", "local"])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert errors == [
        f"Error: {METADATA} is not readable YAML: anchors and aliases are not allowed (line 1)"
    ]
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested over 16 levels"),
        ("a: " + "{b: " * 3000 + "c" + "}" * 3000 + "\n", "nested over 16 levels"),
        ("submission_111:\n  :submitters:\n  - :sid: " + "1" * 5000 + "\n", "not readable"),
        ("submission_111:\n  :created_at: 2026-13-45 12:00:00\n", "not readable YAML"),
        ("- just\n- a list\n", "does not map submissions"),
        ("a: !!python/object:os.system {}\n", "not readable YAML"),
        ("a: [unclosed\n", "not readable YAML"),
        (b"a: \xff\xfe\n", "not readable YAML"),
        ("a: \x00\n", "not readable YAML"),
        ("a: 1\n" + "#" * (10 << 20), "over 10 MB"),
    ],
    ids=[
        "deep_lists",
        "deep_maps",
        "huge_int",
        "impossible_date",
        "not_a_map",
        "python_tag",
        "unclosed",
        "not_utf8",
        "nul",
        "over_the_cap",
    ],
)
def test_odd_metadata_is_a_one_line_error(
    tmp_path: Path, catalog: Catalog, metadata: str | bytes, error: str
) -> None:
    folder = export_with(tmp_path, metadata)
    with pytest.raises(ExportError, match=error) as caught:
        read_export(folder, tmp_path / "scratch", catalog)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 300


def test_real_metadata_still_reads(tmp_path: Path, catalog: Catalog) -> None:
    metadata = FORGED + "  :created_at: 2026-03-01 12:00:00.000000000 -08:00\n  :history: []\n"
    metadata += "submission_222:\n  :submitters: []\n  :score: !ruby/object:BigDecimal 18:0.1e1\n"
    folder = export_with(tmp_path, metadata)
    export = read_export(folder, tmp_path / "scratch", catalog)
    assert export.layout == "a Gradescope export"
    student = export.submissions[0].student
    assert student is not None and (student.id, student.name) == ("1815", "Someone Else")


ODD_ENTRIES = {
    "submission_1": "[1, 2]",
    "submission_2": "\n  :submitters: {a: b}",
    "submission_3": "\n  :submitters: [just, names]",
    "submission_4": "\n  :submitters:\n  - :sid: {x: 1}\n    :name: Mallory",
    "submission_5": "\n  :submitters:\n  - :sid: '5'\n    :name: [Mallory]",
}


def odd_export(folder: Path) -> Path:
    """An export of the correct control (`submission_0`), a submitter with a 300-character name
    (`submission_6`) and the `ODD_ENTRIES`, each a correct split_heads.py."""
    shutil.copytree(COMPLETE, folder / "submission_0")
    entries = {
        "submission_0": "\n  :submitters:\n  - :sid: '1815'\n    :name: Ada Lovelace",
        **ODD_ENTRIES,
        "submission_6": f"\n  :submitters:\n  - :sid: '6'\n    :name: {LONG}\n  - :sid: '7'",
    }
    for name in list(entries)[1:]:
        (folder / name).mkdir()
        shutil.copyfile(SPLIT_HEADS, folder / name / "split_heads.py")
    (folder / METADATA).write_text("".join(f"{k}: {v}\n" for k, v in entries.items()))
    return folder


def test_an_odd_entry_is_a_note_on_its_submission_alone(tmp_path: Path, catalog: Catalog) -> None:
    export = read_export(odd_export(tmp_path / "export"), tmp_path / "scratch", catalog)
    assert export.layout == "a Gradescope export"
    students = {s.path.name: s.student for s in export.submissions}
    assert len(students) == 7 and all(students[name] is None for name in ODD_ENTRIES)
    assert students["submission_0"] == Student(id="1815", name="Ada Lovelace")
    cut = students["submission_6"]
    assert cut is not None and cut.id == "6; 7"
    assert cut.name == "n" * (MAX_FIELD_CHARS - 1) + "…; "
    assert export.notes == [
        f"{METADATA}: 'submission_1': not mapped to its metadata: graded under its folder's name",
        *(
            f"{METADATA}: 'submission_{i}': {why}: graded under its folder's name"
            for i, why in (
                (2, "its submitters are not a list of people"),
                (3, "its submitters are not a list of people"),
                (4, "a submitter's field is not a value"),
                (5, "a submitter's field is not a value"),
            )
        ),
        f"{METADATA}: 'submission_6': a submitter's field over 256 characters, cut",
    ]


def test_an_odd_entry_never_stops_the_export(tmp_path: Path) -> None:
    """Every submission graded, the control with its student; the odd ones under their folder's
    names, with a warning each."""
    folder = odd_export(tmp_path / "export")
    out = tmp_path / "reports"
    result = CliRunner().invoke(cli, ["grade", str(folder), "--out", str(out), *ONE_PROBLEM])
    assert result.exit_code == 0, result.output
    assert "Error" not in result.output
    assert "'submission_6': a submitter's field over 256 characters, cut" in result.output
    assert result.output.count("graded under its folder's name") == len(ODD_ENTRIES)
    book = gradebook(out)
    assert sorted(book) == [f"submission_{i}" for i in range(7)]
    assert book["submission_0"][1:3] == ["1815", "Ada Lovelace"]
    assert all(book[name][1:3] == ["", ""] for name in ODD_ENTRIES)
    assert book["submission_6"][2] == "n" * (MAX_FIELD_CHARS - 1) + "…; "
    assert all(row[3] == book["submission_0"][3] for row in book.values())  # full marks each
