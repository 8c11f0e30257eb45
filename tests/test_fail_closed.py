"""Fail closed: whatever bytes and names a candidate hands in, every other report is written, a
limit they broke is a verdict that names it, and no file is named by them."""

from __future__ import annotations

import csv
import errno
import json
import os
import shutil
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch import save_report
from grader.cli.main import cli
from grader.grade import Grader
from grader.names import MAX_SLUG_BYTES, as_text, report_file, slug
from grader.outputs import Options, write_outputs
from grader.reports.models import ProblemStatus, read_report, write_report
from grader.sandboxing.claims import Wanted
from grader.sandboxing.staging import MAX_DEPTH, Staged, stage_submission
from grader.secret import ENV_SECRET
from grader.shards import SHARD_FILE, read_shard
from grader.specs.paths import builtin_references
from tests.reports import sample_reports
from tests.test_staging import deep_chain, remove_chain

ROOT = Path(__file__).resolve().parent.parent
COMPLETE = ROOT / "submissions" / "complete"
SPLIT_HEADS = builtin_references() / "split_heads.py"
ONE_PROBLEM = ["--backend", "local", "--problem", "split_heads"]


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def gradebook(out: Path) -> dict[str, list[str]]:
    with (out / "summary.csv").open(newline="", encoding="utf-8") as handle:
        _header, _possible, *rows = list(csv.reader(handle))
    return {row[0]: row for row in rows}


def hostile_names_and_trees(batch: Path) -> tuple[list[str], list[Path]]:
    """A class of the correct control and a 1100-deep folder, a 252-byte folder name, a name
    that is not UTF-8 and a zip member named with 303 bytes (each submission a correct
    split_heads.py): the names its reports carry, and the deep chain to remove afterwards."""
    shutil.copytree(COMPLETE, batch / "complete")
    long_name, odd_name = "x" * 252, os.fsdecode(b"odd\xff")
    for name in (long_name, odd_name, "deep"):
        (batch / name).mkdir(parents=True)
        shutil.copyfile(SPLIT_HEADS, batch / name / "split_heads.py")
    chain = deep_chain(batch / "deep", 1100)
    with zipfile.ZipFile(batch / "mallory.zip", "w") as zf:
        zf.writestr("split_heads.py", SPLIT_HEADS.read_text())
        zf.writestr("a" * 300 + ".py", "x = 1\n")
    return ["complete", long_name, as_text(odd_name), "deep", "mallory"], chain


def test_hostile_names_and_trees_keep_the_batch(tmp_path: Path) -> None:
    """Each hostile name and tree is graded, the correct control keeps full marks, every report
    and feedback page is written, in the output folder."""
    batch = tmp_path / "class"
    names, chain = hostile_names_and_trees(batch)
    out = tmp_path / "reports"
    try:
        code, text = run(
            "grade",
            str(batch),
            "--out",
            str(out),
            "--jobs",
            "2",
            *ONE_PROBLEM,
            "--format",
            "html,markdown,gradescope",
        )
    finally:
        remove_chain(chain)
    assert code == 0, text
    assert "Skipped mallory.zip: member 'aaaa" in text and "over 255 bytes" in text
    reports = {n: read_report(out / report_file(n)) for n in names}
    for name, report in reports.items():
        assert report.submission == name
        assert not report.grader_fault, (name, report.message)
        assert report.total == report.max_total, (name, report.message)
        for folder, suffix in (("feedback", ".html"), ("feedback", ".md"), ("gradescope", ".json")):
            assert (out / folder / f"{slug(name)}{suffix}").is_file()
    assert f"over {MAX_DEPTH} folders deep; left out" in reports["deep"].message
    assert set(gradebook(out)) == set(names)
    assert {p.parent for p in tmp_path.rglob("*.json")} <= {out, out / "gradescope"}


def test_an_entry_file_left_out_says_by_which_limit(
    tmp_path: Path, make_grader: Callable[..., Grader]
) -> None:
    grader = make_grader(["split_heads"])
    big = tmp_path / "big"
    big.mkdir()
    (big / "split_heads.py").write_text(SPLIT_HEADS.read_text() + "#" * (1 << 20))
    crowded = tmp_path / "crowded"
    crowded.mkdir()
    for i in range(4):
        (crowded / f"a{i}.py").write_text("#" * 1_048_500)
    shutil.copyfile(SPLIT_HEADS, crowded / "split_heads.py")
    for folder, limit in ((big, "over the 1 MiB limit per file"), (crowded, "4 MiB limit")):
        problem = grader.grade(folder).problem("split_heads")
        assert problem.status is ProblemStatus.not_attempted
        assert problem.message.startswith("split_heads.py was left out: "), problem.message
        assert limit in problem.message


def test_a_limit_is_a_verdict_and_a_fault_is_that_submissions_alone(
    tmp_path: Path, make_grader: Callable[..., Grader], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever staging raises stays in its submission's report: "File name too long" is a
    verdict that names the limit, a failure of ours that submission's grader_error, and the
    batch's other submission keeps its full marks."""
    folders = [tmp_path / name for name in ("too_long", "ours", "ok")]
    for folder in folders:
        folder.mkdir()
        shutil.copyfile(SPLIT_HEADS, folder / "split_heads.py")

    def stage(source: Path, dest: Path, entries: Mapping[str, Wanted]) -> Staged:
        if source.name == "too_long":
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), "x" * 300)
        if source.name == "ours":
            raise RuntimeError("a bug of ours")
        return stage_submission(source, dest, entries)

    monkeypatch.setattr("grader.grade.stage_submission", stage)
    too_long, ours, ok = make_grader(["split_heads"]).grade_many(folders, 2)
    assert not too_long.grader_fault
    assert too_long.problem("split_heads").status is ProblemStatus.not_attempted
    assert too_long.message == (
        "not graded: the submission holds a file name or path longer than the file system allows"
    )
    assert ours.grader_fault and "a bug of ours" in ours.message
    assert ok.total == ok.max_total and not ok.message


def test_a_submission_named_like_a_grader_file_keeps_the_shard_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_SECRET, "the secret both shards share")
    batch = tmp_path / "class"
    for name in ("ada", "grader-shard", "Grader-Shard.json"):
        (batch / name).mkdir(parents=True)
        shutil.copyfile(SPLIT_HEADS, batch / name / "split_heads.py")
    shards = [tmp_path / "shard1", tmp_path / "shard2"]
    for k, out in enumerate(shards, 1):
        args = ["grade", str(batch), "--out", str(out), "--shard", f"{k}/2", "--seed", "5"]
        code, text = run(*args, *ONE_PROBLEM)
        assert code == 0, text
        record = read_shard(out)
        assert record is not None and record.index == k
    merged = tmp_path / "merged"
    code, text = run("report", *map(str, shards), "--out", str(merged))
    assert code == 0, text
    assert set(gradebook(merged)) == {"ada", "grader-shard", "Grader-Shard.json"}
    assert not (merged / SHARD_FILE).exists()
    assert all(not slug(n).lower().startswith("grader") for n in gradebook(merged))


def test_report_never_writes_outside_its_folder(tmp_path: Path) -> None:
    """A saved report's `submission` is checked before anything is written; the writers name
    files by slug whatever it holds."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("../../x", str(outside / "evil")):
        folder = tmp_path / "saved" / slug(name)
        folder.mkdir(parents=True)
        report = sample_reports()[0].model_copy(update={"submission": name})
        (folder / "evil.json").write_text(report.model_dump_json())
        out = tmp_path / "out" / slug(name)
        code, text = run("report", str(folder), "--out", str(out), "--format", "html,markdown")
        assert code == 2 and "Error: " in text and "is a path, not a name" in text, text
        assert "Traceback" not in text and not out.exists()
        written = write_outputs([report], ["csv", "html", "markdown", "gradescope"], Options(out))
        written.append(str(write_report(report, out)))
        assert all(Path(p).resolve().is_relative_to(out.resolve()) for p in written), written
    assert not list(outside.iterdir())
    assert not [p for p in tmp_path.parent.glob("x.*")]


def test_a_report_that_cannot_be_saved_is_that_submissions_grader_error(tmp_path: Path) -> None:
    report = sample_reports()[1]
    problems = [report.problems[0].model_copy(update={"message": "bad \udcff text"})]
    kept = save_report(report.model_copy(update={"problems": problems}), tmp_path)
    assert kept.grader_fault and kept.submission == report.submission
    assert "could not be saved" in kept.message
    assert read_report(tmp_path / report_file(report.submission)) == kept


def test_slugs_are_safe_bounded_and_distinct() -> None:
    names = [
        "ada",
        "Ada_Lovelace-2.v1",
        "a b",
        "a_b",
        "a--b",
        "../../x",
        "/etc/passwd",
        "",
        ".",
        "..",
        "grader-shard",
        "GRADER",
        "_private",
        ".hidden",
        "x" * 252,
        "x" * 253,
        "é",
        "e\u0301",
        "odd\\xff",
        "tab\there",
        "new\nline",
        "a" * 80,
        "a" * 81,
        "s--0123456789abcdef",
    ]
    slugs = [slug(name) for name in names]
    assert len(set(slugs)) == len(names)
    for name, made in zip(names, slugs, strict=True):
        assert len(made.encode()) <= MAX_SLUG_BYTES, made
        assert made[0].isalnum() and made.isascii(), made
        assert all(c.isalnum() or c in "._-" for c in made), made
        assert not made.lower().startswith("grader"), made
        assert (made == name) == ("--" not in made), made
    assert slugs[:2] == ["ada", "Ada_Lovelace-2.v1"] and slug("a" * 80) == "a" * 80
    assert json.loads(json.dumps(slugs)) == slugs


def test_a_notebook_beside_a_folder_of_its_entry_files_name_is_that_submissions_finding(
    tmp_path: Path,
) -> None:
    """A notebook defining split_heads beside a folder named `split_heads.py/` (a module in
    it): staging makes no `split_heads.py` over the folder (it was a grader error on every
    problem), the problem is not attempted and says so, the submission's other problem and the
    control keep full marks."""
    from tests.test_notebooks import notebook

    batch = tmp_path / "class"
    shutil.copytree(COMPLETE, batch / "complete")
    attack = batch / "attack"
    (attack / "split_heads.py").mkdir(parents=True)
    (attack / "split_heads.py" / "inner.py").write_text("x = 1\n")
    (attack / "work.ipynb").write_text(notebook(("code", SPLIT_HEADS.read_text())))
    shutil.copyfile(COMPLETE / "self_attention.py", attack / "self_attention.py")
    out = tmp_path / "reports"
    problems = ["--problem", "split_heads", "--problem", "self_attention"]
    code, text = run("grade", str(batch), "--out", str(out), "--backend", "local", *problems)
    assert code == 0, text
    control, attacked = (read_report(out / report_file(n)) for n in ("complete", "attack"))
    assert control.total == control.max_total, control.message
    assert not attacked.grader_fault, attacked.message
    assert "split_heads.py: not made of a notebook: a folder has its name" in attacked.message
    assert attacked.problem("split_heads").status is ProblemStatus.not_attempted
    kept = attacked.problem("self_attention")
    assert kept.score == kept.max_score, kept.message


def test_a_planned_file_the_file_system_refuses_is_left_out_with_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Staging writes nothing over anything: a plan with a file where a folder is (as a file
    system that holds two names as one makes) leaves that file out, noted, and stages the rest."""
    from grader.sandboxing import staging

    def clashing(chosen: staging.Selection, entries: Mapping[str, Wanted]) -> None:
        chosen.files["split_heads.py/inner.py"] = b"x = 1\n"
        chosen.files["split_heads.py"] = b"y = 2\n"

    (tmp_path / "sub").mkdir()
    shutil.copyfile(COMPLETE / "self_attention.py", tmp_path / "sub" / "self_attention.py")
    monkeypatch.setattr(staging, "from_notebooks", clashing)
    staged = stage_submission(tmp_path / "sub", tmp_path / "staged", {})
    assert set(staged.sources) == {"self_attention.py", "split_heads.py/inner.py"}
    assert staged.left_out == {"split_heads.py": "could not be staged (File exists)"}
    assert "split_heads.py: could not be staged (File exists); left out" in staged.notes
    assert (tmp_path / "staged" / "split_heads.py" / "inner.py").read_bytes() == b"x = 1\n"


def test_names_that_read_alike_are_never_both_graded(tmp_path: Path) -> None:
    """`Zoë` as one code point and as `o` with a combining diaeresis read as one name in every
    output, `Alice` and `alice` share a report file where the file system ignores case: the
    NFC `Zoë` is graded, the other left out with why, shown so that it reads otherwise; both
    Alices are left out (neither is the canonical one); the control keeps full marks, and
    every output holds one row per name."""
    nfc, nfd = "Zo\u00eb", "Zoe\u0308"
    batch = tmp_path / "class"
    for name in ("complete", nfc, "Alice", "alice"):
        shutil.copytree(COMPLETE, batch / name)
    (batch / nfd).mkdir()
    shutil.copyfile(SPLIT_HEADS, batch / nfd / "split_heads.py")
    (batch / nfd / "split_heads.py").write_text("x = 1\n")  # a wrong one: its score differs
    out = tmp_path / "reports"
    code, text = run("grade", str(batch), "--out", str(out), *ONE_PROBLEM, "--format", "csv")
    assert code == 0, text
    assert "Skipped Zoe\\u0308: a name another submission's reads as: rename it" in text
    for name in ("Alice", "alice"):
        assert f"Skipped {name}: a name another submission's reads as: rename it" in text
    assert set(gradebook(out)) == {"complete", nfc}
    assert sorted(p.name for p in out.glob("*.json")) == sorted(
        report_file(n) for n in ("complete", nfc)
    )
    kept = read_report(out / report_file(nfc))
    assert kept.submission == nfc and kept.total == kept.max_total
    assert text.count(nfc) == 1  # its one row of the table
