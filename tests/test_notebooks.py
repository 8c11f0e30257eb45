"""Notebooks handed in: one per problem or one for the whole set, in a folder or a zip, graded
as the files they stand for, with their magics and shell lines left out and said so."""

from __future__ import annotations

import base64
import json
import shutil
import zipfile
from pathlib import Path

from click.testing import CliRunner

from grader.cli.main import cli
from grader.reports.models import ProblemStatus, SubmissionReport
from grader.sandboxing.claims import Wanted, wanted
from grader.sandboxing.definitions import prune
from grader.sandboxing.notebooks import LEFT_OUT, defines, notebook_module
from grader.sandboxing.served import serve
from grader.sandboxing.staging import files_found, select
from grader.specs.problem import load_spec
from tests.conftest import ROOT

COMPLETE = ROOT / "submissions" / "complete"
SPECS = ROOT / "problems"


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
    assert made.invalid == ""
    broken = json.loads(text)
    del broken["cells"][1]["outputs"]  # Jupyter opens it, nbformat's schema refuses it
    read = notebook_module(json.dumps(broken).encode())
    assert read is not None and read.source == made.source
    assert read.invalid == "'outputs' is a required property"
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
        "causal_self_attention.py's by its parameters (hand it in as flash_attention.py or "
        "flash_attention.ipynb)"
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


def own_cell(name: str) -> str:
    """A problem file of `complete` as a notebook's cell: the names it imports from the
    submission's other files are in cells above."""
    lines = (COMPLETE / name).read_text().splitlines(keepends=True)
    return "".join(x for x in lines if not x.startswith(("from attention ", "from split_heads ")))


DEMO = [  # what students write around their classes, at the top level
    (
        "code",
        "%matplotlib inline\nimport time\nimport matplotlib.pyplot as plt\n"
        "import torch.nn.functional as F\ntorch.manual_seed(0)",
    ),
    (
        "code",
        "x = torch.randn(2, 8, 48)\nm = CausalSelfAttention(48, 4, 8).eval()\n"
        "print(m(x).shape)\nassert m(x).shape == x.shape",
    ),
    ("markdown", "Check against torch's own attention, and time both:"),
    (
        "code",
        "q, k, v = (split_heads(t, 4) for t in m.qkv(x).chunk(3, dim=-1))\n"
        "ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
        "start = time.perf_counter()\nfor _ in range(10):\n    m(x)\n"
        "print('mine', time.perf_counter() - start)\n"
        "print((m.proj(merge_heads(ref)) - m(x)).abs().max())",
    ),
    (
        "code",
        "path = '/nonexistent/dir/mha.pt'\ntorch.save(m.state_dict(), path)\n"
        "state = torch.load(path, weights_only=True)\nm.load_state_dict(state)\n"
        "print(list(state))  # the mask buffer is saved too",
    ),
    ("code", "plt.imshow(m.mask.float())\nplt.show()"),
    (
        "code",
        'if __name__ == "__main__":\n    print(F.scaled_dot_product_attention(q, k, v).shape)',
    ),
]


def whole_set(folder: Path, name: str, causal: str) -> None:
    """A notebook of four problems' classes (`causal`: problem 9's cell) amid demo cells."""
    folder.mkdir(parents=True)
    cells = [
        ("markdown", "# Homework: attention"),
        ("code", "import math\nimport torch\nfrom torch import nn\nBLOCK = 8"),
        ("code", own_cell("attention.py")),
        ("code", own_cell("split_heads.py")),
        ("code", own_cell("self_attention.py")),
        ("code", own_cell("multi_head_attention.py")),
        ("code", causal),
        *DEMO,
    ]
    (folder / name).write_text(notebook(*cells))


PNG = base64.b64encode(bytes(3 << 20)).decode()  # a figure: 3 MiB, over what a file may hold
PLOT = {"output_type": "display_data", "data": {"image/png": PNG}, "metadata": {}}


def run_top_to_bottom(path: Path) -> None:
    """The notebook as saved after running it: each code cell with its outputs (a plot among
    them), a pasted image attached to a text cell."""
    saved = json.loads(path.read_text())
    for number, cell in enumerate(saved["cells"]):
        if cell["cell_type"] == "code":
            cell["execution_count"] = number
            text = {"output_type": "stream", "name": "stdout", "text": ["torch.Size([2, 8, 48])"]}
            cell["outputs"] = [text, PLOT] if "plt.show" in "".join(cell["source"]) else [text]
        else:
            cell["attachments"] = {"figure.png": {"image/png": PNG[:100]}}
    path.write_text(json.dumps(saved))
    assert path.stat().st_size > 3 << 20


def grade(folder: Path, out: Path) -> dict[str, SubmissionReport]:
    args = ["grade", str(folder), "--out", str(out), "--backend", "local"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    read = (SubmissionReport.model_validate_json(p.read_text()) for p in out.glob("*.json"))
    return {r.submission: r for r in read}


def test_notebooks_as_students_write_them(tmp_path: Path) -> None:
    """A class of notebooks as students hand them in, named as Jupyter, Colab or they name
    them, with their demo cells (prints, asserts, plots, timing, a comparison against
    F.scaled_dot_product_attention, a checkpoint saved and loaded back): the classes score full
    marks and the report says what was left out; the same notebook whose graded class calls
    F.scaled_dot_product_attention scores 0 there (forbidden API), its other problems full
    marks; a notebook defining MultiHeadAttention for problem 5 and again for problem 7 has each
    graded, and is told; a notebook of nbformat 3 is read. Notebooks are handed in as saved
    after a run, their plots making them megabytes: their outputs are never read."""
    causal = own_cell("causal_self_attention.py")
    subs = tmp_path / "class"
    whole_set(subs / "honest", "mha-implementations.ipynb", causal)
    run_top_to_bottom(subs / "honest" / "mha-implementations.ipynb")
    sdpa = causal.replace(
        "scores = torch.einsum",
        "out = merge_heads(nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True))\n"
        "        return self.resid_dropout(self.proj(out))\n        scores = torch.einsum",
    )
    assert sdpa != causal
    whole_set(subs / "calls_sdpa", "Untitled3.ipynb", sdpa)
    twice = subs / "twice"
    twice.mkdir()
    cells = [own_cell(n) for n in ("attention.py", "split_heads.py", "multi_head_attention.py")]
    cells += ["m = MultiHeadAttention(8, 8, 4, 0.0, 2)\nprint(m)", own_cell("mha_with_weights.py")]
    (twice / "homework.ipynb").write_text(notebook(*(("code", c) for c in cells)))
    old = subs / "old_format"
    old.mkdir()
    v3 = {  # as IPython 2 saved it: worksheets of cells whose code is their `input`
        "metadata": {"name": ""},
        "nbformat": 3,
        "nbformat_minor": 0,
        "worksheets": [
            {
                "cells": [
                    {"cell_type": "heading", "level": 1, "metadata": {}, "source": ["Heads"]},
                    {
                        "cell_type": "code",
                        "collapsed": False,
                        "input": own_cell("split_heads.py"),
                        "language": "python",
                        "metadata": {},
                        "outputs": [{"output_type": "pyout", "png": PNG}],
                    },
                    {
                        "cell_type": "code",
                        "collapsed": False,
                        "input": "print(split_heads)",
                        "language": "python",
                        "metadata": {},
                        "outputs": [],
                    },
                ],
                "metadata": {},
            }
        ],
    }
    (old / "Copy of hw.ipynb").write_text(json.dumps(v3))
    (old / "Untitled4.ipynb").write_text('{"cells": [')  # saved as the kernel died

    reports = grade(subs, tmp_path / "out")
    honest, calls, both = reports["honest"], reports["calls_sdpa"], reports["twice"]
    graded = ["split_heads", "self_attention", "multi_head_attention", "causal_self_attention"]
    for problem in graded:
        assert honest.problem(problem).score == honest.problem(problem).max_score, problem
    assert honest.problem("mha_with_weights").status is ProblemStatus.not_attempted
    assert (
        "mha_implementations.py: the code cells of the notebook mha-implementations.ipynb "
        "(1 magic or shell line(s) and 23 top-level statement(s) of demo code left out)"
    ) in honest.message, honest.message
    assert "causal_self_attention.py: CausalSelfAttention from mha_implementations.py" in (
        honest.message
    )

    forbidden = calls.problem("causal_self_attention")
    assert forbidden.status is ProblemStatus.forbidden_api and forbidden.score == 0
    said = [c.message for c in forbidden.checks if c.check == "forbidden_api"]
    assert said and "scaled_dot_product_attention" in said[0], said
    for problem in graded[:3]:
        assert calls.problem(problem).score == calls.problem(problem).max_score, problem

    for problem in ("multi_head_attention", "mha_with_weights"):
        assert both.problem(problem).score == both.problem(problem).max_score, problem
    assert (
        "MultiHeadAttention is defined 2 times in homework.py (cells 3 and 5), graded by their "
        "parameters, a problem's last: cell 3's as multi_head_attention.py, cell 5's as "
        "mha_with_weights.py"
    ) in both.message, both.message
    assert "multi_head_attention.py: MultiHeadAttention from homework_multi_head_attention.py" in (
        both.message
    )

    assert reports["old_format"].problem("split_heads").score == 13
    notes = reports["old_format"].message
    assert "Copy_of_hw.py: the code cells of the notebook Copy of hw.ipynb" in notes
    assert "Untitled4.ipynb: no notebook nbformat can read; left out" in notes


def test_a_name_defined_twice_for_one_problem_is_told(tmp_path: Path) -> None:
    """Two drafts of problem 5's MultiHeadAttention: the last is graded, as Python would run
    it, and the report says so and how to have each graded; problem 7 is not made of either;
    problem 6's class, misspelled, is named with its fix."""
    folder = tmp_path / "drafts"
    folder.mkdir()
    code = own_cell("multi_head_attention.py")
    draft = code.replace("self.out_proj(", "(")  # no output projection yet
    assert draft != code
    cells = [own_cell("attention.py"), own_cell("split_heads.py"), draft, code]
    cells.append("class MultiheadSelfAttention(nn.Module):\n    pass")  # problem 6, misspelled
    (folder / "Untitled.ipynb").write_text(notebook(*(("code", c) for c in cells)))
    files, _ = files_found(folder, {"multi_head_attention.py": Wanted(("MultiHeadAttention",))})
    assert "multi_head_attention.py" in files
    report = grade(folder, tmp_path / "out")["drafts"]
    assert report.problem("multi_head_attention").score == 18
    assert report.problem("mha_with_weights").status is ProblemStatus.not_attempted
    assert report.problem("multi_head_self_attention").message == (
        "no multi_head_self_attention.py in the submission: the notebook's module Untitled.py "
        "defines no MultiHeadSelfAttention: rename MultiheadSelfAttention to "
        "MultiHeadSelfAttention (the contract's name)"
    )
    assert (
        "MultiHeadAttention is defined 2 times in Untitled.py (cells 3 and 4), graded by their "
        "parameters, a problem's last: cell 3's not graded, cell 4's as multi_head_attention.py; "
        "to have "
        "each graded, hand each problem's in as a file of its own, named as the contract says "
        "(multi_head_attention.py, mha_with_weights.py)"
    ) in report.message, report.message


def test_what_graded_names_need_is_kept_and_demo_code_left_out() -> None:
    """The rule of `definitions`, statement by statement: what the graded class reads as a
    global is kept (an alias of a forbidden function too: the class still calls it), a local of
    the same name as demo code pulls nothing in, and what is left out is blanked, every line
    keeping its number (a form feed in a string breaks none)."""
    source = "\n".join(
        [
            '"""My notebook."""',  # 1 kept: nothing runs
            "import torch",  # 2 kept: the class reads torch
            "import torch.nn.functional as F",  # 3 kept: so does the alias below
            "import matplotlib.pyplot as plt",  # 4 demo
            "from dataclasses import dataclass",  # 5 kept
            "BLOCK = 8  # \f a form feed",  # 6 kept
            "attend = F.scaled_dot_product_attention",  # 7 kept: the class calls it
            "@dataclass",  # 8 kept, decorator and all
            "class Config:",
            "    width: int = BLOCK",
            "class Model(torch.nn.Module):",  # 11 kept: graded
            "    def forward(self, x, cfg=Config(4)):",
            "        out = attend(x, x, x)",
            "        return out",
            "def _forward(self, x):",  # 15 kept: Model.forward is set to it
            "    return self.scale * x",
            "Model.forward = _forward",  # 17 kept: part of Model's definition
            "out = F.scaled_dot_product_attention(x, x, x)",  # 18 demo: `out` is a local above
            "x = torch.randn(2, 3); print(x)",  # 19 demo, both
            "assert Model()(x).shape == x.shape",  # 20 demo
            "for i in range(3):",  # 21 demo
            "    plt.plot(i)",
            'if __name__ == "__main__":',  # 23 demo
            "    BLOCK = 9",
            "def check():",  # 25 demo: the graded names do not need it
            "    return plt.show()",
        ]
    ).encode()
    pruned = prune(source, ["Model"])
    lines = pruned.source.decode().split("\n")
    assert len(lines) == 26
    demo = {i + 1 for i, line in enumerate(lines) if not line}
    assert demo == {4, 18, 19, 20, 21, 22, 23, 24, 25, 26}, demo
    assert pruned.left_out == 8  # statements, the two of line 19 counted apart


def test_a_copy_for_a_problem_keeps_within_the_size_limit(tmp_path: Path) -> None:
    """Problem 5's definition, not the notebook's last, is graded from a copy of its module:
    where that copy would pass the limit for all files together, the problem is not made of
    it, and the note says so; the module as graded is never larger than the notebook's."""
    cells = [own_cell(n) for n in ("attention.py", "split_heads.py", "multi_head_attention.py")]
    cells += ["x = torch.randn(2, 4, 8)", own_cell("mha_with_weights.py")]
    (tmp_path / "homework.ipynb").write_text(notebook(*(("code", c) for c in cells)))
    chosen = select(tmp_path)
    full = chosen.files["homework.py"]
    entries = {
        "multi_head_attention.py": wanted(load_spec(SPECS / "multi_head_attention/spec.toml")),
        "mha_with_weights.py": wanted(load_spec(SPECS / "mha_with_weights/spec.toml")),
    }
    served = serve(chosen.files, chosen.notebooks, entries, room=100)
    assert set(served.entries) == {"mha_with_weights.py"}
    assert (
        "multi_head_attention.py: not made of homework.py: its copy would pass the size limit for "
        "all files together"
    ) in "; ".join(served.notes)
    assert len(served.modules["homework.py"]) == len(full) - len("x = torch.randn(2, 4, 8)")
    served = serve(chosen.files, chosen.notebooks, entries, room=len(full))
    assert set(served.entries) == set(entries)
