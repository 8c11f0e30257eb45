"""What `grader check` and `grader problems` print in an 80-column terminal (a real pty): every
line fits, a wrapped line's continuation is indented under it; `--json` for tools."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

from click.testing import CliRunner

from grader.cli.main import cli
from grader.courses.catalog import Catalog

ROOT = Path(__file__).resolve().parent.parent
MISTAKES = ROOT / "submissions" / "classic_mistakes"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
GRADER = "from grader.cli.main import main; main()"


def in_terminal(args: list[str], cwd: Path, columns: int = 80) -> tuple[int, list[str]]:
    """`grader ARGS` run in a pseudo-terminal `columns` wide: its exit status and the lines it
    showed (each frame of a progress bar one), without colours."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"}
    env.pop("COLUMNS", None)
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-c", GRADER, *args], stdin=follower, stdout=follower,
        stderr=follower, cwd=cwd, env=env,
    )  # fmt: skip
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    text = ANSI.sub("", shown.decode("utf-8")).rstrip("\r\n")
    return process.wait(timeout=60), re.split(r"\r?\n|\r", text)  # a lone \r: a bar redrawn


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def test_check_fits_80_columns_and_indents_what_it_wraps() -> None:
    code, lines = in_terminal(["check", "."], MISTAKES)
    assert code == 1, lines
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
    details = [i for i, line in enumerate(lines) if indent(line) == 6]
    wrapped = [i for i, line in enumerate(lines) if indent(line) == 8]
    assert details and wrapped  # the named mistakes' lines are long, and were wrapped
    for i in wrapped:  # under a detail's line, or under a line that continues one
        assert indent(lines[i - 1]) in (6, 8), lines[i - 1 : i + 1]
    text = " ".join(line.strip() for line in lines)
    assert "named mistake: no causal mask: tokens attend to future tokens" in text
    assert "call .contiguous() (reshape returns a view when it can)" in text


def test_problems_fit_80_columns(catalog: Catalog) -> None:
    code, lines = in_terminal(["problems"], ROOT)
    assert code == 0
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
    for problem in catalog.problems.values():
        row = next(line.split() for line in lines if f" {problem.spec.id} " in line)
        assert row[:3] == [str(problem.spec.number), problem.spec.id, f"{problem.points:g}"]
    text = " ".join(line.strip() for line in lines)
    assert "Single-head causal attention with dropout" in text


def test_problems_json_lists_every_problem(catalog: Catalog) -> None:
    result = CliRunner().invoke(cli, ["problems", "--json"], catch_exceptions=False)
    listed = json.loads(result.output)
    assert [p["id"] for p in listed] == list(catalog.problems)
    split = next(p for p in listed if p["id"] == "split_heads")
    problem = catalog.problems["split_heads"]
    assert split["points"] == problem.points and split["hidden_checks"] == problem.hidden()[0]
    assert split["number"] == problem.spec.number and split["title"] == problem.spec.title


def test_check_json_is_the_candidates_report(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["check", str(MISTAKES), "--json", "--seed", "1"], catch_exceptions=False
    )
    assert result.exit_code == 1
    out = json.loads(result.stdout)
    report, hidden = out["report"], out["hidden"]
    graded = {p["problem"]: p for p in report["problems"] if p["status"] != "not_attempted"}
    assert set(graded) == {"split_heads", "causal_self_attention", "mha_by_loop"}
    assert graded["mha_by_loop"]["score"] < graded["mha_by_loop"]["max_score"]
    assert hidden["split_heads"]["checks"] > 0 and hidden["split_heads"]["points"] > 0


def test_an_error_fits_80_columns(tmp_path: Path) -> None:
    """`grader check` where there is no problem file: its error names every expected file."""
    (tmp_path / "notes.txt").write_text("my notes\n")
    code, lines = in_terminal(["check", "."], tmp_path)
    assert code == 2 and lines[0].startswith("Error: no problem file in ")
    assert len(lines) > 1 and all(len(line) <= 80 for line in lines), lines
    assert all(line.startswith("  ") for line in lines[1:]), lines
    assert "split_heads.py" in " ".join(lines)


def test_grade_fits_80_columns(tmp_path: Path) -> None:
    """`grader grade` of the example class into a folder whose path is longer than a line: what
    it wrote, the score table, its legend and where the reports are, each within 80 columns."""
    out = tmp_path / ("a-folder-named-at-length-" * 3) / "reports"
    args = ["grade", str(ROOT / "submissions"), "--backend", "local", "--out", str(out)]
    code, lines = in_terminal([*args, "--format", "html", "--seed", "1"], ROOT)
    assert code == 0, lines
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
    text = "".join(line.strip() for line in lines)
    assert f"Reports written to{out}/" in text and f"wrote {out}/report.html" in text
    assert any(line.split()[:2] == ["complete", "11"] for line in lines), lines
