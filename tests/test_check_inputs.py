"""`grader check` reads what `grade` reads, through the same code: a zip file of one
submission, problem files in one folder of it, a notebook or a problem's file given as PATH;
a misnamed file is told its rename, and a notebook that a `.py` file outdoes is named."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from click.testing import CliRunner

from grader.cli.main import cli
from tests.conftest import ROOT
from tests.test_notebooks import notebook

MISTAKES = ROOT / "submissions" / "classic_mistakes"
COMPLETE = ROOT / "submissions" / "complete"


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", *args, "--seed", "1"], catch_exceptions=False)
    return result.exit_code, result.output


def headings(out: str) -> set[str]:
    """The problems whose feedback the output shows."""
    return {line.split()[0] for line in out.splitlines() if line and not line[0].isspace()}


def test_a_zip_and_a_folder_in_it_are_checked_as_grade_reads_them(tmp_path: Path) -> None:
    """A candidate's zip of their folder, as they would hand it in, and that folder unpacked
    under another: both checked like the folder itself, the same problems, the same score."""
    code, out = check(str(MISTAKES))
    assert code == 1, out
    problems = {"split_heads", "causal_self_attention", "mha_by_loop"}
    assert problems <= headings(out)
    score = next(line for line in out.splitlines() if line.startswith("Checks run here"))
    archive = tmp_path / "handin.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for file in sorted(MISTAKES.iterdir()):
            zf.write(file, f"my-work/{file.name}")
    code, zipped = check(str(archive))
    assert code == 1 and problems <= headings(zipped), zipped
    assert score in zipped and "grader check ." not in zipped
    unpacked = tmp_path / "unpacked"
    shutil.copytree(MISTAKES, unpacked / "my-work")
    code, nested = check(str(unpacked))
    assert code == 1 and problems <= headings(nested), nested
    assert score in nested and "graded the problem files in the folder my-work/" in nested


def test_a_notebook_given_as_path_checks_the_problems_it_defines(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    cells = [("code", (COMPLETE / n).read_text()) for n in ("split_heads.py", "self_attention.py")]
    (folder / "homework.ipynb").write_text(notebook(*cells))
    code, out = check(str(folder / "homework.ipynb"))
    assert code == 0, out
    assert {"split_heads", "self_attention"} <= headings(out)
    assert "causal_attention" not in out


def test_a_misnamed_file_is_told_its_rename(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(COMPLETE / "split_heads.py", folder / "SplitHeads.py")
    code, out = check(str(folder / "SplitHeads.py"))
    assert code == 2 and "SplitHeads.py is no problem's file: rename it to split_heads.py" in out


def test_a_py_file_outdoing_a_notebook_is_said(tmp_path: Path) -> None:
    """A `.py` file and a notebook both defining a problem's names: the `.py` file is graded,
    and the feedback says the notebook's were not, as `grade`'s report does."""
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(MISTAKES / "split_heads.py", folder)
    (folder / "homework.ipynb").write_text(
        notebook(("code", (COMPLETE / "split_heads.py").read_text()))
    )
    code, out = check(str(folder))
    assert code == 1, out  # the .py file's mistakes, not the notebook's right answer
    assert "split_heads.py: graded as handed in; the notebook homework.ipynb defines" in out
    result = CliRunner().invoke(
        cli, ["grade", str(folder), "--backend", "local", "--out", str(tmp_path / "out")],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = (tmp_path / "out" / "mine.json").read_text()
    assert "split_heads.py: graded as handed in; the notebook homework.ipynb defines" in report
