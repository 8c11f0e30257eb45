"""Class exports as grading input: zip files, Gradescope's export, cloned Classroom repositories."""

from __future__ import annotations

import csv
import json
import shutil
import stat
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli.main import cli
from grader.courses.catalog import Catalog
from grader.names import submission_name
from grader.platforms.exports import ExportError, open_export, read_export
from grader.platforms.unzip import Caps, UnsafeZip, extract
from grader.reports.models import read_report

ROOT = Path(__file__).resolve().parent.parent
COMPLETE, MISTAKES = ROOT / "submissions" / "complete", ROOT / "submissions" / "classic_mistakes"
METADATA = """\
submission_111:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1815'
    :email: ada@example.org
  :created_at: 2026-03-01 12:00:00.000000000 -08:00
  :score: 0.0
submission_222:
  :submitters:
  - :name: Alan Turing
    :email: alan@example.org
  - :name: Grace Hopper
    :sid: '1906'
  :created_at: 2026-03-01 13:00:00.000000000 -08:00
"""


def zip_folder(source: Path, archive: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(source.rglob("*")):
            zf.write(path, prefix + path.relative_to(source).as_posix())
    return archive


def symlink_member(zf: zipfile.ZipFile, name: str, target: str) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    zf.writestr(info, target)


@pytest.fixture
def zips(tmp_path: Path) -> Path:
    """ada: a flat zip; bob: one folder zipped; evil: hostile; broken: not a zip at all."""
    folder = tmp_path / "zips"
    folder.mkdir()
    zip_folder(COMPLETE, folder / "ada.zip")
    zip_folder(MISTAKES, folder / "bob.zip", prefix="bob_work/")
    with zipfile.ZipFile(folder / "evil.zip", "w") as zf:
        zf.writestr("split_heads.py", "x = 1\n")
        zf.writestr("../evil.py", "x = 1\n")
        symlink_member(zf, "causal_self_attention.py", "/etc/passwd")
    (folder / "broken.zip").write_bytes(b"PK\x03\x04 not really a zip")
    return folder


def names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_folder_of_zips(zips: Path, tmp_path: Path, catalog: Catalog) -> None:
    export = read_export(zips, tmp_path / "scratch", catalog)
    assert export.layout == "a folder of submissions"
    ada, bob = export.submissions
    assert (ada.path.name, bob.path.name) == ("ada", "bob")
    assert ada.student is not None and ada.student.id == "ada"
    assert bob.student is not None and bob.student.id == "bob"
    assert names(ada.path) == names(COMPLETE)
    assert names(bob.path) == names(MISTAKES)  # the zipped folder is the submission
    skipped = "\n".join(export.skipped)
    assert "broken.zip: not a readable zip file" in skipped
    assert "evil.zip: member '../evil.py' points outside the archive" in skipped
    assert not list(tmp_path.rglob("evil.py"))


def test_hostile_members_are_refused(tmp_path: Path) -> None:
    caps = Caps(members=10, file_bytes=100, total_bytes=150)
    cases: dict[str, list[tuple[str, str | None]]] = {
        "symbolic link": [("link.py", None)],
        "outside": [("/abs.py", "x")],
        "over 100": [("big.py", "x" * 101)],
        "uncompressed, over": [("a.py", "x" * 80), ("b.py", "x" * 80)],
        "members, over": [(f"{i}.txt", "") for i in range(11)],
    }
    for number, (reason, members) in enumerate(cases.items()):
        archive = tmp_path / f"{number}.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            for name, text in members:
                if text is None:
                    symlink_member(zf, name, "/etc/passwd")
                else:
                    zf.writestr(name, text)
        with pytest.raises(UnsafeZip, match=reason):
            extract(archive, tmp_path / "out", lambda p: p.suffix == ".py", caps)
        assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_a_zipped_class_folder_is_its_submissions_and_a_zip_of_zips_is_refused(
    zips: Path, tmp_path: Path, catalog: Catalog
) -> None:
    """`zip -r class.zip ada bob` holds two submissions, not one empty one; a zip of the
    students' zips is refused with what to do instead."""
    examples = COMPLETE.parent
    archive = zip_folder(examples, tmp_path / "class.zip", prefix="class/")
    export = read_export(archive, tmp_path / "scratch", catalog)
    assert export.layout == "a zipped folder of submissions"
    graded = {s.path.name: names(s.path) for s in export.submissions}
    expected = sorted(p.name for p in examples.iterdir() if p.is_dir())
    assert sorted(graded) == expected
    assert graded[COMPLETE.name] == names(COMPLETE)
    one = read_export(zip_folder(COMPLETE, tmp_path / "ada.zip"), tmp_path / "s2", catalog)
    assert one.layout == "a zip file" and len(one.submissions) == 1
    nested = zip_folder(zips, tmp_path / "zips.zip")
    with pytest.raises(ExportError, match="unzip it and grade the folder"):
        read_export(nested, tmp_path / "s3", catalog)


def class_zip_with(
    archive: Path, prefix: str, evil: list[tuple[str, str | None]], students: int = 2
) -> Path:
    """The complete example and the classic mistakes (or, `students=1`, the complete one),
    zipped as a class under `prefix` as macOS's Finder zips it (`__MACOSX/`, a `.DS_Store`,
    a read-me beside the students, a link to it in a student's folder), with `evil`'s
    members (a name and its text, None for a link) in another student's folder."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("__MACOSX/._class", "")
        zf.writestr(".DS_Store", "")
        zf.writestr(f"{prefix}README.txt", "the class")
        for student, source in (("ada", COMPLETE), ("bob", MISTAKES))[:students]:
            zf.writestr(f"__MACOSX/{prefix}{student}/._split_heads.py", "")
            symlink_member(zf, f"{prefix}{student}/README.txt", "../README.txt")
            for path in sorted(source.glob("*.py")):
                zf.write(path, f"{prefix}{student}/{path.name}")
        for name, text in evil:
            if text is None:
                symlink_member(zf, f"{prefix}eve/{name}", "/etc/passwd")
            else:
                zf.writestr(f"{prefix}eve/{name}", text)
    return archive


@pytest.mark.parametrize("prefix", ["", "class/"])
def test_one_students_members_in_a_class_zip_cost_that_student_only(
    tmp_path: Path, catalog: Catalog, prefix: str
) -> None:
    """A member the rules refuse, or a folder over a student zip's caps, leaves out its
    student's folder, with why; the others' are read."""
    split = (COMPLETE / "split_heads.py").read_text()
    cases: dict[str, list[tuple[str, str | None]]] = {
        "is 1048577 bytes, over 1048576": [("homework.ipynb", "x" * ((1 << 20) + 1))],
        "is a symbolic link": [("link.py", None)],
        "points outside the archive": [("../../escape.py", split)],
        "has the path of another": [("a\\b.py", split), ("a/b.py", split)],
        "bytes uncompressed, over the cap of 33554432": [
            (f"big{i}.py", "#" * (1 << 20)) for i in range(33)
        ],
    }
    for number, (why, evil) in enumerate(cases.items()):
        for students in (2, 1):
            archive = class_zip_with(tmp_path / f"c{number}{students}.zip", prefix, evil, students)
            with open_export(archive, catalog) as export:
                assert export.layout == "a zipped folder of submissions", export.skipped
                graded = [s.path.name for s in export.submissions]
                assert graded == ["ada", "bob"][:students], (why, export.skipped)
                assert names(export.submissions[0].path) == {p.name for p in COMPLETE.glob("*.py")}
                left = [note for note in export.skipped if f"'{prefix}eve' left out" in note]
                assert len(left) == 1 and why in left[0], (why, export.skipped)
        assert not list(tmp_path.rglob("escape.py"))


def test_a_gradescope_export_zip_keeps_metadata_over_a_students_file_cap(
    tmp_path: Path, catalog: Catalog
) -> None:
    """Metadata is the export's, not a student's: 1.5 MB of it (a course with many
    resubmissions) is read, with the submitters' identities."""
    folder = gradescope_export(tmp_path / "assignment_1_export")
    with (folder / "submission_metadata.yml").open("a") as metadata:
        metadata.write("# " + "x" * 1_500_000 + "\n")
    archive = zip_folder(folder, tmp_path / "export.zip", prefix="assignment_1_export/")
    with open_export(archive, catalog) as export:
        assert export.layout == "a Gradescope export", export.skipped
        ids = [s.student.id for s in export.submissions if s.student]
        assert ids == ["1815", "alan@example.org; 1906"]


def test_a_colon_in_a_file_name_is_a_name(tmp_path: Path, catalog: Catalog) -> None:
    """`split_heads:old.py` is a legal name on Linux and macOS, not a drive: the export is
    read, the file with it; a drive (`C:`) is still outside the archive."""
    folder = gradescope_export(tmp_path / "assignment_1_export")
    (folder / "submission_222" / "split_heads:old.py").write_text("x = 1\n")
    archive = zip_folder(folder, tmp_path / "export.zip", prefix="assignment_1_export/")
    with open_export(archive, catalog) as export:
        assert [s.path.name for s in export.submissions] == ["submission_111", "submission_222"]
        assert (export.submissions[1].path / "split_heads:old.py").is_file()
    drive = tmp_path / "drive.zip"
    with zipfile.ZipFile(drive, "w") as zf:
        zf.writestr("C:/split_heads.py", "x = 1\n")
    with pytest.raises(UnsafeZip, match="points outside the archive"):
        extract(drive, tmp_path / "out", lambda p: True, Caps(10, 100, 100))


def test_a_name_that_is_not_text_never_takes_another_submissions_report(
    tmp_path: Path, catalog: Catalog
) -> None:
    """The bytes `student_\\xff` (not UTF-8) read as the text `student_\\xff`, another folder's
    name: the folder whose name is its own text is graded, the other left out with why. Links
    to two folders of one name are named as the links are."""
    batch = tmp_path / "class"
    batch.mkdir()
    shutil.copytree(COMPLETE, batch / "student_\\xff")
    raw = batch.as_posix().encode() + b"/student_\xff"
    shutil.copytree(COMPLETE, raw.decode("utf-8", "surrogateescape"))
    shutil.copytree(MISTAKES, batch / "other")
    with open_export(batch, catalog) as export:
        assert [s.path.name for s in export.submissions] == ["other", "student_\\xff"]
        assert export.skipped == ["student_\\xff: a name another submission's reads as: rename it"]
    links = tmp_path / "links"
    links.mkdir()
    for student in ("alice", "bob"):
        shutil.copytree(COMPLETE, tmp_path / "uploads" / student / "submission")
        (links / student).symlink_to(tmp_path / "uploads" / student / "submission")
    with open_export(links, catalog) as export:
        assert [submission_name(s.path) for s in export.submissions] == ["alice", "bob"]


def gradescope_export(folder: Path) -> Path:
    folder.mkdir()
    (folder / "submission_metadata.yml").write_text(METADATA)
    shutil.copytree(COMPLETE, folder / "submission_111")
    shutil.copytree(MISTAKES, folder / "submission_222")
    return folder


def test_gradescope_export_folder_and_zip(tmp_path: Path, catalog: Catalog) -> None:
    folder = gradescope_export(tmp_path / "assignment_1_export")
    archive = zip_folder(folder, tmp_path / "export.zip", prefix="assignment_1_export/")
    for path in (folder, archive):
        with open_export(path, catalog) as export:
            assert export.layout == "a Gradescope export"
            assert [s.path.name for s in export.submissions] == ["submission_111", "submission_222"]
            students = [s.student for s in export.submissions]
            assert [(s.id, s.name) for s in students if s] == [
                ("1815", "Ada Lovelace"),
                ("alan@example.org; 1906", "Alan Turing; Grace Hopper"),
            ]
            assert names(export.submissions[1].path) == names(MISTAKES)
            unpacked = export.submissions[0].path
    assert not unpacked.exists()  # the zip's scratch folder went on exit
    assert folder.exists()


def test_classroom_clones(tmp_path: Path, catalog: Catalog) -> None:
    for name, source in (("attention-ada", COMPLETE), ("attention-alan-t", MISTAKES)):
        shutil.copytree(source, tmp_path / name)
        (tmp_path / name / ".git").mkdir()
    export = read_export(tmp_path, tmp_path / "unused", catalog)
    assert export.layout == "cloned Classroom repositories"
    assert [s.path for s in export.submissions] == [
        tmp_path / "attention-ada",
        tmp_path / "attention-alan-t",
    ]
    assert [s.student.id for s in export.submissions if s.student] == ["ada", "alan-t"]


def test_plain_folders_keep_todays_behaviour(tmp_path: Path, catalog: Catalog) -> None:
    export = read_export(COMPLETE, tmp_path, catalog)
    assert [(s.path, s.student) for s in export.submissions] == [(COMPLETE, None)]
    export = read_export(ROOT / "submissions", tmp_path, catalog)
    assert [s.path.name for s in export.submissions] == sorted(names(ROOT / "submissions"))


def test_grade_a_folder_of_zips(zips: Path, tmp_path: Path, catalog: Catalog) -> None:
    out = tmp_path / "reports"
    args = ["grade", str(zips), "--backend", "local", "--problem", "split_heads", "--out", str(out)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Reading a folder of submissions: 2 submission(s)" in result.output
    assert "Skipped broken.zip" in result.output and "Skipped evil.zip" in result.output
    with (out / "summary.csv").open(newline="") as handle:
        header, possible, *rows = list(csv.reader(handle))
    assert header[:4] == ["submission", "student_id", "student_name", "split_heads"]
    full = f"{catalog.problems['split_heads'].spec.max_score:g}"
    assert possible[:6] == ["points possible", "", "", full, full, full]
    assert [row[:2] for row in rows] == [["ada", "ada"], ["bob", "bob"]]
    assert rows[0][3] == full and float(rows[1][3]) < float(full)


def nested_class(folder: Path) -> Path:
    """pat: a problem file at the top; oscar: two in the one folder `hw/` (zipped by hand)."""
    (folder / "pat").mkdir(parents=True)
    shutil.copy(COMPLETE / "split_heads.py", folder / "pat")
    (folder / "oscar" / "hw").mkdir(parents=True)
    for name in ("split_heads.py", "causal_self_attention.py"):
        shutil.copy(COMPLETE / name, folder / "oscar" / "hw")
    return folder


def grade_cli(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_files_in_one_folder_score_alike_in_every_form(tmp_path: Path) -> None:
    """A submission whose files sit in one folder scores as `gradescope run` scores it, whether
    `grade` reads it in a class folder, a zipped class, a Gradescope export or its zip."""
    school = nested_class(tmp_path / "class")
    export = tmp_path / "assignment_1_export"
    export.mkdir()
    (export / "submission_metadata.yml").write_text(METADATA)
    shutil.copytree(school / "pat", export / "submission_111")
    shutil.copytree(school / "oscar", export / "submission_333")
    forms = {
        school: "oscar",
        zip_folder(school, tmp_path / "class.zip", prefix="class/"): "oscar",
        export: "submission_333",
        zip_folder(export, tmp_path / "export.zip", prefix="export/"): "submission_333",
    }
    results = tmp_path / "results.json"
    grade_cli(["gradescope", "run", str(school / "oscar"), "--results", str(results)])
    expected = json.loads(results.read_text())
    assert "graded the problem files in the folder hw/" in expected["output"]
    for index, (path, name) in enumerate(forms.items()):
        out = tmp_path / f"out{index}"
        grade_cli(["grade", str(path), "--backend", "local", "--out", str(out)])
        report = read_report(out / f"{name}.json")
        assert report.total == expected["score"] > 0, path
        assert report.message == "graded the problem files in the folder hw/"
        if name == "oscar":
            assert read_report(out / "pat.json").message == ""  # its files are at its top
