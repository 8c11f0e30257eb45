"""Notebooks handed in: one per problem or one for the whole set, in a folder or a zip, graded
as the files they stand for, with their magics and shell lines left out and said so."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

from click.testing import CliRunner

from grader.cli.main import cli
from grader.reports.models import SubmissionReport
from grader.sandboxing.notebooks import LEFT_OUT, defines, notebook_module
from tests.conftest import ROOT

COMPLETE = ROOT / "submissions" / "complete"


def notebook(*cells: tuple[str, str]) -> str:
    """A notebook as Jupyter saves it (nbformat 4), of (cell type, source) pairs."""
    made: list[dict[str, object]] = [
        {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
        | ({"outputs": [], "execution_count": None} if kind == "code" else {})
        for kind, source in cells
    ]
    return json.dumps({"cells": made, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_code_cells_become_a_module_without_magics() -> None:
    text = notebook(
        ("markdown", "# My attention"),
        ("code", "%matplotlib inline\n!pip install torch\nimport math"),
        ("code", "%%bash\necho 1"),
        ("code", "%%time\ndef f():\n    return math.pi"),
    )
    made = notebook_module(text.encode())
    assert made is not None and made.left_out == 5
    source = made.source.decode()
    assert f"{LEFT_OUT}%matplotlib inline" in source and "\nimport math\n" in source
    assert f"{LEFT_OUT}echo 1" in source and f"{LEFT_OUT}%%time" in source
    assert defines(made.source, ["f"])  # a timed cell's body is Python
    assert notebook_module(b'{"not": "a notebook"}') is None
    assert notebook_module(b"\xff\xfe") is None


def test_notebooks_are_graded_as_the_files_they_stand_for(tmp_path: Path) -> None:
    """`self_attention.ipynb` for one problem, a folder; `attention_exercises.ipynb` holding
    three problems (one a module the others import), zipped: both score full marks."""
    subs = tmp_path / "subs"
    one = Path(shutil.copytree(COMPLETE, subs / "per_problem"))
    code = (one / "self_attention.py").read_text()
    (one / "self_attention.py").unlink()
    (one / "self_attention.ipynb").write_text(
        notebook(("code", "%matplotlib inline\n!pip install torch"), ("code", code))
    )
    whole = Path(shutil.copytree(COMPLETE, tmp_path / "whole_set"))
    cells = [("code", "%load_ext autoreload")]
    for name in ("split_heads.py", "self_attention.py", "causal_attention.py"):
        cells.append(("code", (whole / name).read_text()))
        (whole / name).unlink()
    (whole / "attention_exercises.ipynb").write_text(notebook(*cells))
    with zipfile.ZipFile(subs / "whole_set.zip", "w") as archive:
        for path in sorted(whole.iterdir()):
            archive.write(path, path.name)

    out = tmp_path / "out"
    args = ["grade", str(subs), "--out", str(out), "--backend", "local", "--format", "markdown"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    reports = {
        r.submission: r
        for r in (SubmissionReport.model_validate_json(p.read_text()) for p in out.glob("*.json"))
    }
    assert set(reports) == {"per_problem", "whole_set"}
    for report in reports.values():
        assert report.total == report.max_total, (report.submission, report.message)
    assert reports["per_problem"].message == (
        "self_attention.py: the code cells of the notebook self_attention.ipynb "
        "(2 magic or shell line(s) left out)"
    )
    said = reports["whole_set"].message
    assert "split_heads.py: split_heads, merge_heads from attention_exercises.py" in said
    assert "attention\\_exercises.ipynb" in (out / "feedback" / "whole_set.md").read_text()


def test_check_finds_the_problems_of_a_notebook(tmp_path: Path) -> None:
    """`grader check` on a folder holding a notebook only: the problems it defines are checked
    (here all of them pass), no other is counted against it."""
    folder = tmp_path / "mine"
    folder.mkdir()
    cells = [("code", (COMPLETE / n).read_text()) for n in ("split_heads.py", "self_attention.py")]
    (folder / "homework.ipynb").write_text(notebook(*cells))
    result = CliRunner().invoke(cli, ["check", str(folder)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "split_heads" in result.output and "self_attention" in result.output


def test_a_name_in_a_notebook_serves_one_problem(tmp_path: Path) -> None:
    """homework.ipynb holds split_heads and problem 9's CausalSelfAttention, the class
    flash_attention.py must define too: it is problem 9's, and problem 10, never attempted, is
    not graded; the notes say so, and how to hand it in for problem 10."""
    folder = tmp_path / "mine"
    folder.mkdir()
    causal = (COMPLETE / "causal_self_attention.py").read_text()
    own = causal.replace("from split_heads import merge_heads, split_heads\n", "")  # a cell above
    assert own != causal
    cells = [("code", (COMPLETE / "split_heads.py").read_text()), ("code", own)]
    (folder / "homework.ipynb").write_text(notebook(*cells))
    result = CliRunner().invoke(cli, ["check", str(folder)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "causal_self_attention" in result.output and "flash_attention" not in result.output
    out = tmp_path / "out"
    args = ["grade", str(folder), "--out", str(out), "--backend", "local"]
    assert CliRunner().invoke(cli, args, catch_exceptions=False).exit_code == 0
    report = SubmissionReport.model_validate_json((out / "mine.json").read_text())
    scored = {p.problem: p.score for p in report.problems if p.score}
    assert scored == {"split_heads": 13, "causal_self_attention": 17}, scored
    assert (
        "flash_attention.py: not made of homework.py, whose CausalSelfAttention is "
        "causal_self_attention.py's (hand it in as flash_attention.py or flash_attention.ipynb)"
    ) in report.message


def test_a_problem_s_notebook_stands_for_that_problem_alone(tmp_path: Path) -> None:
    """causal_self_attention.ipynb defines CausalSelfAttention, the class flash_attention.py
    must define too: it is problem 9's, and problem 10, never attempted, is not graded."""
    folder = tmp_path / "mine"
    folder.mkdir()
    code = (COMPLETE / "causal_self_attention.py").read_text()
    (folder / "causal_self_attention.ipynb").write_text(notebook(("code", code)))
    shutil.copy(COMPLETE / "split_heads.py", folder)  # which it imports
    result = CliRunner().invoke(cli, ["check", str(folder)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "causal_self_attention" in result.output and "flash_attention" not in result.output
