"""Host work on a candidate's bytes is bounded in time: a file the parser would spend a minute
on costs its own submission a finding, and the submission graded beside it nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from grader import api
from grader.cli.main import cli
from grader.sandboxing.parsetime import PARSE_SECONDS, screen, too_slow
from tests.conftest import ROOT

BOMB = 'note = f"' + "{0}" * 100_000 + '"\n'  # 300 KB: a minute of the parser's time, once


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
    """The budget is far above honest code: 1 MiB of torch's own functional.py."""
    import torch.nn.functional

    source = Path(torch.nn.functional.__file__).read_bytes()
    honest = source * ((1 << 20) // len(source))
    assert screen({"big.py": honest, "small.py": b"x = 1\n"}) == {}
    assert too_slow(honest) is None
