"""The local backend hides the host environment and kills runaway process groups."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from grader.grade import Grader
from grader.report import SubmissionReport
from tests.test_hostile import leftover_processes


def test_environment_is_scrubbed(
    tmp_path: Path, make_grader: Callable[..., Grader], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRADER_TEST_SECRET", "do-not-leak")
    (tmp_path / "split_heads.py").write_text(
        "import os\nprint(dict(os.environ))\n\n"
        "def split_heads(x, n):\n    return x\n\n\ndef merge_heads(x):\n    return x\n"
    )
    problem = make_grader(["split_heads"]).grade(tmp_path).problem("split_heads")
    assert "HOME" in problem.stdout
    assert "do-not-leak" not in problem.stdout
    assert "GRADER_TEST_SECRET" not in problem.stdout
    assert os.environ["GRADER_TEST_SECRET"] == "do-not-leak"


DETACHED = """
import os, time

for _ in range({count}):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open({pids!r}, "a") as f:
                f.write(f"{{os.getpid()}}\\n")
            time.sleep(600)
        os._exit(0)


def split_heads(x, n):
    B, T, C = x.shape
    assert C % n == 0
    return x.reshape(B, T, n, C // n).permute(0, 2, 1, 3)


def merge_heads(x):
    B, nh, T, hd = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, nh * hd).contiguous()
"""


def test_every_process_a_problem_starts_ends_with_it(
    tmp_path: Path, make_grader: Callable[..., Grader]
) -> None:
    """Twenty processes that left their session and their parent are killed and reaped before
    the worker goes on, and the problem is graded as usual."""
    pids = tmp_path / "pids"
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "split_heads.py").write_text(DETACHED.format(count=20, pids=str(pids)))
    problem = make_grader(["split_heads"]).grade(submission).problem("split_heads")
    assert problem.score == problem.max_score, problem.message
    assert problem.message == "20 process(es) it left running were killed"
    started = [int(line) for line in pids.read_text().split()]
    assert len(started) == 20
    assert not [pid for pid in started if Path(f"/proc/{pid}").exists()]


def test_an_interrupt_stops_the_batch_at_once(
    make_grader: Callable[..., Grader], tmp_path: Path
) -> None:
    """Ctrl-C (here raised when the first report arrives) kills the running workers, starts no
    more, and reaches the caller in about a second, not when the hung problems time out."""
    grader = make_grader(["causal_self_attention"], problem_seconds=20.0)
    hostile = Path(__file__).parent / "hostile"
    batch = [Path(__file__).parent.parent / "submissions" / "complete"]
    batch += [hostile / "infinite_loop"] * 3
    graded: list[str] = []

    def interrupt(report: SubmissionReport) -> None:
        graded.append(report.submission)
        raise KeyboardInterrupt

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        grader.grade_many(batch, jobs=2, on_done=interrupt)
    assert time.monotonic() - start < 10
    assert graded == ["complete"]
    assert not leftover_processes(str(grader.workdir))
