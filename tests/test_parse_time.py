"""Host work on a candidate's bytes is bounded in time: a file the parser would spend a minute
on costs its own submission a finding, and the submission graded beside it nothing."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from grader import api
from grader.cli.main import cli
from grader.sandboxing import definitions, staging
from grader.sandboxing.notebooks import notebook_module
from grader.sandboxing.parsetime import PARSE_SECONDS, Screened, key, screen, too_slow
from tests.conftest import ROOT

BOMB = 'note = f"' + "{0}" * 70_000 + '"\n'
"""210 KB that take the parser 8 s of CPU, over twice its budget (it grows as the square of the
fields: 100,000 take 16 s, a minute on a slower machine). Every problem whose file imports it
compiles it in the sandbox: seven of the complete submission's eleven."""


def test_a_parser_bomb_costs_its_own_submission_a_finding_and_the_other_nothing(
    tmp_path: Path,
) -> None:
    """Graded two at a time beside a complete submission: the bomb's problem is unreadable for
        the host (its source check says why, as it does for each problem that imports it), its other
    problems and the other submission full marks.
        Parsed on the host, the bomb held the interpreter's lock while the other's deadlines ran
        out (it fell to 87/180), and similarity spent as long again on it."""
    batch = tmp_path / "batch"
    for name in ("bomb", "control"):
        shutil.copytree(ROOT / "submissions" / "complete", batch / name)
    split_heads = batch / "bomb" / "split_heads.py"
    split_heads.write_text(BOMB + split_heads.read_text())
    out = tmp_path / "out"
    args = ["grade", str(batch), "--out", str(out), "--backend", "local", "--jobs", "2"]
    CliRunner().invoke(cli, args, catch_exceptions=False)
    control = json.loads((out / "control.json").read_text())
    assert control["total"] == control["max_total"] == 180
    bomb = {p["problem"]: p for p in json.loads((out / "bomb.json").read_text())["problems"]}
    assert bomb["split_heads"]["score"] == 0  # its compile in the sandbox may time out first
    assert bomb["split_heads"]["status"] in ("forbidden_api", "timeout")
    assert f"takes over {PARSE_SECONDS:g} s" in json.dumps(bomb["split_heads"])
    for problem in bomb.values():  # those that import split_heads.py (the helper does) too
        assert problem["score"] == problem["max_score"] or "takes over" in json.dumps(problem)
    assert bomb["self_attention"]["score"] == bomb["self_attention"]["max_score"]
    compared = api.similarity(batch, problems=["split_heads"])
    assert any("split_heads.py" in n and "takes over" in n for n in compared.notes)


def test_honest_code_at_the_size_cap_parses_within_the_budget() -> None:
    """The budget, of the parser's CPU time however loaded the machine, is far above honest
    code: 1 MiB of torch's own functional.py, a 1 MiB table of constants."""
    import torch.nn.functional

    source = Path(torch.nn.functional.__file__).read_bytes()
    honest = source * ((1 << 20) // len(source))
    constants = "".join(f"CONST_{i} = [{i}, {i * 7}, 0.{i}, 'name_{i}']\n" for i in range(20_000))
    table = constants.encode()  # a 1 MiB table: 3.4 to 4.1 s of a loaded machine's wall clock
    assert len(table) < 1 << 20
    assert screen({"big.py": honest, "small.py": b"x = 1\n", "table.py": table}) == Screened()
    assert too_slow(honest) is None and too_slow(table) is None


def slow_notebook(fields: int) -> str:
    """A notebook whose one cell is an f-string of `fields` fields: each alone within the
    parser's budget for a file."""
    cell: dict[str, object] = {"cell_type": "code", "metadata": {}, "outputs": []}
    cell["execution_count"] = None
    cell["source"] = 'X = f"' + "{a}" * fields + '"\n'
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 4})


def test_a_submission_s_files_together_have_a_parse_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many notebooks, each parsed within a file's budget, parsed once for every problem file
    (11 times each) held the host for minutes: each is parsed once to see what it defines, and
    past the submission's budget for all its files the rest are left out, told why; the
    submission beside it keeps full marks."""
    monkeypatch.setattr(staging, "SUBMISSION_SECONDS", 0.1)  # a complete one takes 0.003 s
    batch = tmp_path / "batch"
    for name in ("control", "notebooks"):
        shutil.copytree(ROOT / "submissions" / "complete", batch / name)
    for number in range(3):  # sorted before the problem files that follow them
        (batch / "notebooks" / f"a{number}.ipynb").write_text(slow_notebook(6000 + number))
    parsed: Counter[str] = Counter()

    def counted(source: bytes, *args: Any, **kwargs: Any) -> Any:
        parsed[key(source)] += 1
        return compile(source, *args, **kwargs)

    monkeypatch.setattr(definitions, "compile", counted, raising=False)
    out = tmp_path / "out"
    args = ["grade", str(batch), "--out", str(out), "--backend", "local", "--jobs", "2"]
    CliRunner().invoke(cli, args, catch_exceptions=False)
    control = json.loads((out / "control.json").read_text())
    assert control["total"] == control["max_total"] == 180
    report = json.loads((out / "notebooks.json").read_text())
    assert (
        "Python's parser took over 0.1 s on the files before it together; left out"
        in (report["message"])
    )
    split_heads = next(p for p in report["problems"] if p["problem"] == "split_heads")
    assert split_heads["status"] == "not_attempted"  # a file after them, left out too
    assert "split_heads.py was left out: Python's parser took over" in json.dumps(split_heads)
    modules = [notebook_module(slow_notebook(6000 + n).encode()) for n in range(3)]
    # what it defines, its tree to serve problems from, its module as graded: not once a problem
    assert all(m is not None and parsed[key(m.source)] <= 3 for m in modules), parsed
