"""Near misses: a file or a name almost as the contract says gets the rename that fixes it, in a
whole submission as a candidate hands it in."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader.cli.main import cli
from grader.grade import Grader
from grader.reports.html import render_feedback_html
from grader.reports.markdown import candidate_feedback
from grader.reports.models import CheckStatus, ProblemStatus
from grader.reports.redact import candidate_view
from grader.reports.terminal import print_feedback
from grader.verdict.checks.scope import Sources
from grader.verdict.near import alike, missing_file
from grader.verdict.suggest import missing_import, missing_symbol
from tests.conftest import ROOT
from tests.test_notebooks import notebook


@pytest.mark.parametrize(
    ("wanted", "name", "near"),
    [
        ("split_heads.py", "SplitHeads.py", True),
        ("split_heads.py", "split_heads (1).py", True),
        ("split_heads.py", "split-heads copy.py", True),
        ("split_heads.py", "split_heads.py.txt", True),
        ("split_heads.py", "split_head.py", True),
        ("GroupedQueryAttention", "GQA", True),
        ("MultiHeadAttention", "MultiHeadAtention", True),
        ("CausalSelfAttention", "CausalSelfAttn", True),
        ("split_heads", "split_hds", True),
        ("split_heads.py", "merge_heads.py", False),
        ("self_attention.py", "causal_self_attention.py", False),
        ("mha_by_loop", "attend", False),
    ],
)
def test_near_misses(wanted: str, name: str, near: bool) -> None:
    assert alike(wanted, name) is near


def test_a_file_gets_its_rename_move_or_export() -> None:
    found = ["notes.md", "SplitHeads.py", "nb/self_attention.ipynb", "src/flash_attention.py"]
    assert missing_file("split_heads.py", found) == (
        "found SplitHeads.py: rename it to split_heads.py"
    )
    assert "found src/flash_attention.py: move it" in str(missing_file("flash_attention.py", found))
    assert "notebook nb/self_attention.ipynb: save it as Python" in str(
        missing_file("self_attention.py", found)
    )
    assert missing_file("mha_wrapper.py", found) is None


def test_another_problem_s_file_is_never_a_near_miss() -> None:
    """causal_self_attention.py is as alike to causal_attention.py as a typo, but it is problem
    9's: renaming it would lose that problem."""
    found = ["causal_self_attention.py"]
    assert "rename" in str(missing_file("causal_attention.py", found))
    taken = {"causal_attention.py", "causal_self_attention.py"}
    assert missing_file("causal_attention.py", found, taken) is None


def test_a_near_miss_is_offered_to_the_problem_it_is_most_like() -> None:
    """`multi_head_attention (1).py` is alike to two problems' files: only the one it copies
    is told to rename it."""
    found = ["multi_head_attention (1).py"]
    taken = {p.name for p in (ROOT / "submissions" / "complete").iterdir()}
    near = missing_file("multi_head_attention.py", found, taken)
    assert near == "found multi_head_attention (1).py: rename it to multi_head_attention.py"
    assert missing_file("multi_head_self_attention.py", found, taken) is None


@pytest.mark.parametrize(
    ("files", "hint"),
    [
        ({"m.py": "class GQA:\n    pass\n"}, "m.py defines no GroupedQueryAttention: rename GQA"),
        (
            {"m.py": "import helpers\n", "helpers.py": "class GroupedQueryAttention:\n    pass\n"},
            "it is in helpers.py; import it there or move it to m.py",
        ),
        ({"m.py": "def attend():\n    pass\n"}, "(it defines attend): name it as the contract"),
        ({"m.py": "x = 1\n"}, "m.py defines no GroupedQueryAttention: it defines no class"),
        # bound some other way: the grader says nothing it cannot know
        ({"m.py": "from helpers import *\n"}, None),
        ({"m.py": "GroupedQueryAttention = make()\n"}, None),
        ({"m.py": "if True:\n    from h import GroupedQueryAttention\n"}, None),
    ],
)
def test_a_name_gets_its_rename(files: dict[str, str], hint: str | None) -> None:
    sources = Sources({path: text.encode() for path, text in files.items()})
    found = missing_symbol(sources, "m.py", "GroupedQueryAttention")
    assert (found is None) if hint is None else (hint in str(found)), found


def test_a_submission_of_near_misses_is_told_what_to_rename(
    make_grader: Callable[..., Grader], tmp_path: Path
) -> None:
    """The complete submission as a hurried candidate hands it in: one file renamed by the
    browser, one with its extension doubled, one in a folder, a function named short; the rest
    of the files are right and score full marks, a notebook named with a space among them."""
    root = tmp_path / "near_misses"
    shutil.copytree(ROOT / "submissions" / "complete", root)
    (root / "causal_attention.py").rename(root / "causal_attention (1).py")
    (root / "mha_wrapper.py").rename(root / "mha_wrapper.py.txt")
    (root / "src").mkdir()
    (root / "flash_attention.py").rename(root / "src" / "flash_attention.py")
    code = (root / "self_attention.py").read_text()
    (root / "self attention.ipynb").write_text(notebook(("code", code)))  # read as self_attention
    (root / "self_attention.py").unlink()
    (root / "split_heads.py").rename(root / "SplitHeads.py")  # four problems import it
    loop = root / "mha_by_loop.py"
    loop.write_text(loop.read_text().replace("def mha_by_loop(", "def mha_loop("))

    report = make_grader().grade_many([root], jobs=1)[0]
    expected = {
        "causal_attention": "found causal_attention (1).py: rename it to causal_attention.py",
        "mha_wrapper": "found mha_wrapper.py.txt: rename it to mha_wrapper.py",
        "flash_attention": "found src/flash_attention.py: move it to the submission's top folder",
        "split_heads": "found SplitHeads.py: rename it to split_heads.py",
    }
    for problem, hint in expected.items():
        result = report.problem(problem)
        assert result.status is ProblemStatus.not_attempted and hint in result.message
    assert report.problem("self_attention").score == 11
    loop_checks = report.problem("mha_by_loop").checks
    renamed = "mha_by_loop.py defines no mha_by_loop: rename mha_loop to mha_by_loop"
    assert any(renamed in c.message for c in loop_checks), [c.message for c in loop_checks]
    imported = report.problem("multi_head_attention")
    assert imported.status is ProblemStatus.import_error
    assert imported.message.endswith(
        ": split_heads is not in the submission: found SplitHeads.py: rename it to split_heads.py"
    )
    view = candidate_view(report)
    assert "found SplitHeads.py" in view.problem("multi_head_attention").message
    feedback = candidate_feedback(view)
    assert "rename mha\\_loop to mha\\_by\\_loop" in feedback
    assert "- mha\\_wrapper: no mha\\_wrapper.py in the submission: found" in feedback
    assert "rename it to causal_attention.py</li>" in render_feedback_html(view)
    console = Console(record=True, width=300)
    print_feedback(view, {}, console)
    assert "move it to the submission's top folder" in console.export_text()
    rest = [p for p in report.problems if p.status is ProblemStatus.graded]
    assert {p.problem for p in rest} == {"mha_by_loop", "self_attention"}, rest


def test_a_file_in_the_one_folder_is_graded_and_beside_top_files_is_told_to_move(
    make_grader: Callable[..., Grader], tmp_path: Path
) -> None:
    """Problem files in the one folder of a submission are graded there; a problem file in a
    folder beside those at the top is a near miss, told to move."""
    alone, beside = tmp_path / "alone", tmp_path / "beside"
    for root in (alone, beside):
        (root / "src").mkdir(parents=True)
        shutil.copy(ROOT / "submissions" / "complete" / "split_heads.py", root / "src")
    shutil.copy(ROOT / "submissions" / "complete" / "self_attention.py", beside)
    graded, hinted = make_grader(["split_heads"]).grade_many([alone, beside], jobs=1)
    assert graded.problem("split_heads").status is ProblemStatus.graded
    assert graded.message == "graded the problem files in the folder src/"
    moved = "found src/split_heads.py: move it to the submission's top folder"
    assert moved in hinted.problem("split_heads").message and hinted.message == ""


def test_an_import_of_a_renamed_file_gets_its_rename() -> None:
    sources = Sources(
        {
            "m.py": b"import math\nfrom split_heads import split_heads\n",
            "SplitHeads.py": b"def split_heads(x, n):\n    return x\n",
            "maths.py": b"",
        }
    )
    error = "No module named 'split_heads'"
    assert missing_import(sources, "m.py", error) == (
        ": split_heads is not in the submission: found SplitHeads.py: rename it to split_heads.py"
    )
    assert missing_import(sources, "m.py", "No module named 'einops'") == ""


def test_a_syntax_error_shows_its_place_to_the_candidate(
    make_grader: Callable[..., Grader], tmp_path: Path
) -> None:
    """Read by the host from the file handed in, so every output may show it."""
    root = tmp_path / "syntax"
    shutil.copytree(ROOT / "submissions" / "complete", root)
    entry = root / "self_attention.py"
    entry.write_text(entry.read_text().replace("def forward(self, x):", "def forward(self x):"))
    report = make_grader(["self_attention"]).grade_many([root], jobs=1)[0]
    view = candidate_view(report)
    where = "raised SyntaxError: invalid syntax at self_attention.py:"
    assert where in view.problem("self_attention").message
    assert ", column " in view.problem("self_attention").message
    assert "`def forward(self x):`" in view.problem("self_attention").message
    assert "self\\_attention.py:" in candidate_feedback(view)


def test_a_class_named_short_is_told_its_rename_by_every_check(
    make_grader: Callable[..., Grader], tmp_path: Path
) -> None:
    """`class CausalSelfAttn`: every check that builds the class says what to rename, the one
    expecting the constructor to raise included (the grader's lookup of the name is not the
    candidate's KeyError); the source check still runs."""
    root = tmp_path / "short"
    root.mkdir()
    shutil.copy(ROOT / "submissions" / "complete" / "split_heads.py", root)
    code = (ROOT / "submissions" / "complete" / "causal_self_attention.py").read_text()
    (root / "causal_self_attention.py").write_text(
        code.replace("class CausalSelfAttention(", "class CausalSelfAttn(")
    )
    report = make_grader(["causal_self_attention"]).grade_many([root], jobs=1)[0]
    checks = report.problem("causal_self_attention").checks
    renamed = "defines no CausalSelfAttention: rename CausalSelfAttn to CausalSelfAttention"
    for check in checks:
        if check.check == "forbidden_api":
            assert check.status is CheckStatus.passed
        else:
            assert check.status is CheckStatus.error and renamed in check.message, check
    assert any(c.check == "raises" for c in checks)


def test_check_names_the_files_to_rename(tmp_path: Path) -> None:
    """`grader check` as a hurried candidate meets it: a misnamed file beside a right one is
    reported with its rename (not silently passed over); a folder of misnamed files only is
    told what to rename, not just what was expected."""
    mine = tmp_path / "mine"
    mine.mkdir()
    complete = ROOT / "submissions" / "complete"
    shutil.copy(complete / "mha_by_loop.py", mine)
    shutil.copy(complete / "split_heads.py", mine / "SplitHeads.py")
    result = CliRunner().invoke(cli, ["check", str(mine)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "found SplitHeads.py: rename it to split_heads.py" in result.output
    (mine / "mha_by_loop.py").rename(mine / "mha_by_loop.py.txt")
    result = CliRunner().invoke(cli, ["check", str(mine)], catch_exceptions=False)
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: no problem file in {mine}: found ")
    for hint in ("SplitHeads.py: rename it to split_heads.py", "rename it to mha_by_loop.py"):
        assert hint in result.output, result.output
