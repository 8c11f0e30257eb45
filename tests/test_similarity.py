"""Similarity across a class: disguised copies rank above every honest pair of their problem,
and no honest pair is flagged; hostile bytes never stop the comparison."""

from __future__ import annotations

import json
import math
import zipfile
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from grader import api
from grader.reports.html import render_html
from grader.reports.similarity import (
    CLASS_PAIRS_FILE,
    PAIRS,
    VIEW_FILE,
    Similarity,
    SimilarPair,
)
from grader.resume import stale_warning
from grader.sandboxing.staging import MAX_FILES
from grader.similarity.document import MAX_MODULES
from grader.similarity.scoring import above_bulk, score_pairs
from tests.class_reports import realistic_class
from tests.fakes import FakeBackend
from tests.similarity_class import copied_class, honest_class, write_class
from tests.similarity_disguises import DISGUISES, everything


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Similarity, dict[str, str]]:
    students, originals = copied_class()
    folder = write_class(students, tmp_path_factory.mktemp("class"))
    return api.similarity(folder, out_dir=folder / "out"), originals


def origin(name: str, originals: dict[str, str]) -> str:
    return originals.get(name, name)


def by_problem(pairs: list[SimilarPair]) -> dict[str, list[SimilarPair]]:
    found: dict[str, list[SimilarPair]] = {}
    for pair in pairs:
        found.setdefault(pair.problem, []).append(pair)
    return found


def test_every_copy_ranks_above_every_honest_pair(
    compared: tuple[Similarity, dict[str, str]],
) -> None:
    result, originals = compared
    problems = by_problem(result.pairs)
    assert len(problems) == 11
    for problem, pairs in problems.items():
        scores = {(p.a, p.b): p.score for p in pairs}
        names = sorted({n for p in pairs for n in (p.a, p.b)})
        copies: list[tuple[float, str, str]] = []
        honest: list[tuple[float, str, str]] = []
        for a, b in combinations(names, 2):
            score = scores.get((a, b), scores.get((b, a), 0.0))
            same = origin(a, originals) == origin(b, originals)
            (copies if same else honest).append((score, a, b))
        assert min(copies) > max(honest), (problem, min(copies), max(honest))


def test_no_honest_pair_is_flagged_and_copies_of_longer_code_are(
    compared: tuple[Similarity, dict[str, str]],
) -> None:
    result, originals = compared
    for pair in result.pairs:
        same = origin(pair.a, originals) == origin(pair.b, originals)
        assert pair.flagged <= same, pair
    flagged = {(p.problem, p.a, p.b) for p in result.pairs if p.flagged}
    assert len(flagged) >= 40, sorted(flagged)  # of the 11 problems' 9 copy pairs each


def test_the_pairs_are_written_most_similar_first_with_their_schema(
    compared: tuple[Similarity, dict[str, str]], tmp_path: Path
) -> None:
    result, _ = compared
    folder = write_class({"a": {"split_heads.py": "x = 1\n"}}, tmp_path)
    api.similarity(folder, out_dir=tmp_path / "out")
    assert PAIRS.validate_json((tmp_path / "out" / "similarity.json").read_bytes()) == []
    for pairs in by_problem(result.pairs).values():
        assert [p.score for p in pairs] == sorted((p.score for p in pairs), reverse=True)
    schema = api.report_schema("similarity")
    assert schema["type"] == "array"
    fields = schema["$defs"]["SimilarPair"]["required"]
    assert set(fields) == {"problem", "a", "b", "score", "flagged"}


def test_copies_of_one_problem_far_above_its_honest_pairs_are_flagged(tmp_path: Path) -> None:
    """Compared on one problem, where copies score from about 0.63 and honest pairs at most
    0.16: the copies' spread keeps their z-scores under twice the bar, and the gap between them
    and the bulk of the class flags every copy all the same, and no honest pair."""
    students, originals = copied_class()
    folder = write_class(students, tmp_path)
    result = api.similarity(folder, problems=["multi_head_self_attention"])
    copies = [p for p in result.pairs if origin(p.a, originals) == origin(p.b, originals)]
    honest = [p for p in result.pairs if origin(p.a, originals) != origin(p.b, originals)]
    assert min(p.score for p in copies) < 0.7 and max(p.score for p in honest) <= 0.2
    assert all(p.flagged for p in copies), copies
    assert not [p for p in honest if p.flagged]


def test_the_gap_is_measured_above_pairs_that_share_something() -> None:
    """A gap above pairs that share nothing shows no spread: only the scores of pairs that
    share code, from the median up, make the bulk a pair must stand clear of."""
    assert above_bulk(np.array([0, 0, 0, 0, 0.1, 0.12, 0.13, 0.64, 0.7])) == 0.64
    assert above_bulk(np.array([0, 0, 0, 0, 0, 0, 0.45])) == math.inf
    assert above_bulk(np.array([0.1, 0.2, 0.3, 0.61, 0.61, 0.67])) == math.inf


def test_the_honest_class_alone_has_nothing_flagged(tmp_path: Path) -> None:
    result = api.similarity(write_class(honest_class(), tmp_path))
    assert not [p for p in result.pairs if p.flagged]


@pytest.mark.parametrize("disguise", [*DISGUISES, "everything"])
def test_each_disguise_keeps_a_copy_close(disguise: str, tmp_path: Path) -> None:
    students, _ = copied_class()
    students["copy"] = DISGUISES.get(disguise, everything)(students["compact"])
    result = api.similarity(write_class(students, tmp_path), problems=["multi_head_attention"])
    (pair,) = [p for p in result.pairs if {p.a, p.b} == {"copy", "compact"}]
    assert pair.score > 0.8 and pair.flagged


def test_hostile_files_are_left_out_with_a_note(tmp_path: Path) -> None:
    students = honest_class()
    folder = write_class(students, tmp_path / "class")
    odd = folder / "odd"
    odd.mkdir()
    (odd / "split_heads.py").write_bytes(b"\x00\x01binary")
    (odd / "self_attention.py").write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    (odd / "causal_attention.py").write_text("x = (" * 5000 + ")" * 5000)
    (odd / "mha_wrapper.py").write_text("def broken(:\n")
    (odd / "multi_head_attention.py").write_bytes(b"#" * (2 << 20))
    (odd / "mha_by_loop.py").symlink_to("/etc/passwd")
    (odd / "helper.py").write_text("import helper\nfrom helper import *\n")
    (odd / "fused_qkv_attention.py").write_text("import helper\n" + "[" * 200 + "]" * 200)
    (odd / "causal_self_attention.py").write_text("def f(x):\n    return x" + ".a" * 400 + "\n")
    result = api.similarity(folder)  # the chain parses, but is too deep to unparse: as it is
    notes = "\n".join(result.notes)
    for left_out in ("split_heads.py: binary", "self_attention.py: not UTF-8", "mha_by_loop.py"):
        assert left_out in notes
    assert "multi_head_attention.py" in notes  # over the staging limit per file


def test_zips_and_notebooks_are_read_as_grade_reads_them(tmp_path: Path) -> None:
    students = honest_class()
    students["copy"] = everything(students["compact"])
    folder = write_class(students, tmp_path / "class")
    zips = tmp_path / "zips"
    zips.mkdir()
    for name in students:
        if name == "loops":
            continue
        with zipfile.ZipFile(zips / f"{name}.zip", "w") as archive:
            for file in (folder / name).iterdir():
                archive.write(file, file.name)
    code = (folder / "loops" / "self_attention.py").read_text()
    cell: dict[str, object] = {
        "cell_type": "code",
        "source": code,
        "metadata": {},
        "outputs": [],
        "execution_count": None,
    }
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (zips / "loops").mkdir()
    (zips / "loops" / "self_attention.ipynb").write_text(json.dumps(notebook))
    compared = api.similarity(zips)
    result = by_problem(compared.pairs)
    assert {result["flash_attention"][0].a, result["flash_attention"][0].b} == {"compact", "copy"}
    assert any("loops" in (p.a, p.b) for p in result["self_attention"])
    read = "loops: self_attention.py: the code cells of the notebook self_attention.ipynb"
    assert compared.read == [read] and not any("loops" in n for n in compared.notes)
    assert f"read: {read}" in api.similarity_lines(compared)
    page = render_html(realistic_class(), similarity=compared)
    assert "<summary>Read of notebooks (1)</summary>" in page and "Left out" not in page


def test_the_class_report_shows_the_pairs_side_by_side(
    compared: tuple[Similarity, dict[str, str]],
) -> None:
    result, _ = compared
    reports = realistic_class()
    assert 'id="similarity"' not in render_html(reports)
    page = render_html(reports, similarity=result)
    assert page.count('<details class="pair-view" open>') >= 11
    assert '<span class="hit">' in page and "moved_copy_of_loops" in page


def test_report_renders_again_the_similarity_grade_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`grade --format html` saves the pairs and the section it rendered; `report --format
    html` renders it again without the submissions; a section it cannot read is a warning."""
    monkeypatch.setattr("grader.batch.make_backend", lambda *args, **kwargs: FakeBackend())
    students, _ = copied_class()
    folder = write_class({n: students[n] for n in sorted(students)[:4]}, tmp_path / "class")
    out = tmp_path / "out"
    api.grade(folder, out_dir=out, formats=["html"])
    graded = (out / "report.html").read_text()
    assert 'id="similarity"' in graded and PAIRS.validate_json((out / CLASS_PAIRS_FILE).read_text())
    assert stale_warning(sorted(students)[:4], out, "this batch") is None  # not taken as reports
    (out / "report.html").unlink()
    api.report([out], formats=["html"])
    assert (out / "report.html").read_text().count('class="pair-view"') == graded.count(
        'class="pair-view"'
    )
    (out / VIEW_FILE).write_text("{")
    warned: list[str] = []
    api.report([out], formats=["html"], listener=api.Listener(warn=warned.append))
    assert 'id="similarity"' not in (out / "report.html").read_text()
    assert len(warned) == 1 and VIEW_FILE in warned[0], warned


def test_a_failure_to_compare_the_class_costs_the_class_report_its_section_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Similarity is advice: `grade --format html,csv` writes every report, the gradebook and
    the class report when comparing the class fails, and says so."""

    def fails(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("grader.batch.make_backend", lambda *args, **kwargs: FakeBackend())
    monkeypatch.setattr("grader.similarity.compare.compare_class", fails)
    folder = write_class(dict(sorted(honest_class().items())[:2]), tmp_path / "class")
    out, warned = tmp_path / "out", list[str]()
    api.grade(
        folder, out_dir=out, formats=["html", "csv"], listener=api.Listener(warn=warned.append)
    )
    assert (out / "summary.csv").is_file() and (out / "report.html").is_file()
    assert 'id="similarity"' not in (out / "report.html").read_text()
    assert [w for w in warned if "the class report has no similarity" in w], warned


def test_the_command_prints_the_ranking_and_writes_the_pairs(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from grader.cli.main import cli

    students, _ = copied_class()
    folder = write_class(students, tmp_path / "class")
    out = tmp_path / "out"
    done = CliRunner().invoke(cli, ["similarity", str(folder), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "FLAGGED" in done.output and "pair(s) flagged" in done.output
    assert PAIRS.validate_json((out / "similarity.json").read_bytes())
    schema = CliRunner().invoke(cli, ["schema", "similarity"])
    assert json.loads(schema.output)["type"] == "array"


def test_a_helper_in_another_file_reads_as_the_code_written_in_place() -> None:
    from grader.similarity.document import problem_document

    inline = (
        "def split_heads(x, n):\n    b, t, c = x.shape\n"
        "    return x.view(b, t, n, c // n).transpose(1, 2)\n"
    )
    helped = {
        "split_heads.py": "from ops import heads\n\n\n"
        "def split_heads(x, n):\n    return heads(x, n)\n",
        "ops.py": "def dims(t):\n    return t.shape\n\n\ndef heads(y, k):\n"
        "    b, t, c = dims(y)\n    return y.reshape(b, t, k, c // k).permute(0, 2, 1, 3)\n",
    }
    symbols = ["split_heads", "merge_heads"]
    alone = problem_document("split_heads.py", {"split_heads.py": inline}, (), symbols)
    moved = problem_document("split_heads.py", helped, (), symbols)
    assert moved.text == alone.text
    assert {line.file for line in moved.lines} == {"split_heads.py"}


def test_a_copy_with_its_code_moved_into_helpers_of_another_file_ranks_first(
    compared: tuple[Similarity, dict[str, str]],
) -> None:
    result, _ = compared
    for problem, pairs in by_problem(result.pairs).items():
        (pair,) = [
            p for p in pairs if {p.a, p.b} == {"extracted_copy_of_view_transpose", "view_transpose"}
        ]
        honest = [p for p in pairs if p.score >= pair.score and p is not pair]
        assert pair.flagged and all(p.flagged for p in honest), (problem, pair, honest)


def test_a_small_class_still_ranks_its_pairs_and_says_flagging_is_limited(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from grader.cli.main import cli

    students = honest_class()
    small = {"a": students["compact"], "b": dict(students["compact"])}
    result = api.similarity(write_class(small, tmp_path / "two"), problems=["split_heads"])
    (pair,) = result.pairs
    assert pair.score >= 0.8 and pair.flagged and result.small == {"split_heads": 2}
    five = {name: students[name] for name in ("loops", "einsum", "unflatten")}
    five |= {"a": students["compact"], "b": dict(students["compact"])}
    folder = write_class(five, tmp_path / "five")
    result = api.similarity(folder)
    assert {(p.a, p.b) for p in result.pairs if p.flagged} == {("a", "b")}
    assert all(p.score >= 0.8 for p in result.pairs if p.flagged)
    done = CliRunner().invoke(cli, ["similarity", str(folder)])
    assert "flagging limited: split_heads: 5 submissions, too few" in done.output
    page = render_html(realistic_class(), similarity=result)
    assert "Flagging limited: mha_by_loop: 5 submissions" in page


@pytest.mark.parametrize("expected", [set[int](), {1, 2}])
def test_identical_documents_score_below_1_where_they_are_like_the_course_s_code(
    expected: set[int],
) -> None:
    """As the docs say: what a pair shares of the course's code adds less than it weighs in
    each document, so identical documents score 1 only when none of it is the course's."""
    same = {value: [0] for value in range(1, 9)}
    other = {value: [0] for value in range(20, 28)}
    (pair, *_) = score_pairs([same, dict(same), other], expected)
    assert (pair.a, pair.b) == (0, 1)
    assert pair.score == 1 if not expected else 0.8 < pair.score < 1


@pytest.mark.parametrize("empty", [19, 150])
def test_every_module_a_problem_imports_is_compared(empty: int, tmp_path: Path) -> None:
    """A verbatim copy moved into a module imported through a chain of empty ones: after 19 it
    was never compared and nothing said so, then after 64 it was named in a note alone. Every
    module staging takes is compared now, and the copy is flagged."""
    assert empty + 2 < MAX_MODULES == MAX_FILES
    students = honest_class()
    hidden = {f"pad{i}.py": f"from pad{i + 1} import *\n" for i in range(empty)}
    hidden[f"pad{empty}.py"] = students["compact"]["multi_head_attention.py"]
    students["hidden"] = {"multi_head_attention.py": "from pad0 import *\n", **hidden}
    result = api.similarity(write_class(students, tmp_path), problems=["multi_head_attention"])
    pairs = [p for p in result.pairs if {p.a, p.b} == {"hidden", "compact"}]
    assert pairs and pairs[0].flagged, pairs
    assert "not compared" not in "\n".join(result.notes)
