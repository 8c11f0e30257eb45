"""Hostile submissions gain nothing, and the rest of the batch is graded."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from grader.grade import Grader
from grader.reports.models import CheckStatus, ProblemStatus
from tests.conftest import ROOT

HOSTILE = ROOT / "tests" / "hostile"
VALUE_CHECKS = {"allclose", "output_shape", "causality", "gradients", "dropout", "mask_buffer"}
# A module that maps each token on its own with a registered buffer earns these honestly.
HONEST_FOR_PER_TOKEN_OUTPUT = {"causality", "mask_buffer"}
EXPECTED_STATUS = {
    "infinite_loop": ProblemStatus.timeout,
    "os_exit": ProblemStatus.crashed,
    "segfault": ProblemStatus.crashed,
    "kills_worker": ProblemStatus.crashed,
    "fake_report": ProblemStatus.graded,
    "allclose_patched": ProblemStatus.forbidden_api,  # torch.allclose changed: tampering
    "fork_at_import": ProblemStatus.graded,
}


def test_hostile_batch(make_grader: Callable[..., Grader]) -> None:
    grader = make_grader(["causal_self_attention"], problem_seconds=8.0)
    names = sorted(EXPECTED_STATUS)
    paths = [HOSTILE / n for n in names] + [ROOT / "submissions" / "complete"]
    reports = {r.submission: r for r in grader.grade_many(paths, jobs=2)}
    expected = dict(EXPECTED_STATUS)
    if grader.environment.get("pid_namespace") == "its own":
        # the worker is PID 1 of its namespace: the kernel drops its child's signal, as in a
        # container, and the module's wrong values are graded
        expected["kills_worker"] = ProblemStatus.graded

    honest = reports["complete"].problem("causal_self_attention")
    assert honest.score == honest.max_score
    for name in names:
        problem = reports[name].problem("causal_self_attention")
        assert problem.status is expected[name], (name, problem.status, problem.message)
        assert not reports[name].grader_fault
        judged = problem.status in (ProblemStatus.graded, ProblemStatus.forbidden_api)
        guarded = {"allclose"} if judged else VALUE_CHECKS
        guarded = guarded - HONEST_FOR_PER_TOKEN_OUTPUT
        gained = [
            c.name for c in problem.checks if c.check in guarded and c.status is CheckStatus.passed
        ]
        assert not gained, (name, gained)
    assert not leftover_processes(str(grader.workdir))


def leftover_processes(marker: str, settle: float = 10.0) -> list[str]:
    """Command lines of live processes that mention `marker` (zombies excluded), once those
    already killed have had `settle` seconds to go: a torch process takes a moment to die, on
    a loaded machine more, and one in a PID namespace of its own is not waited for by the
    grader, which reaps the namespace's launcher. A process left running is still there."""
    deadline = time.monotonic() + settle
    found = live_processes(marker)
    while found and time.monotonic() < deadline:
        time.sleep(0.1)
        found = live_processes(marker)
    return found


def live_processes(marker: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().split(") ")[-1][:1]
        except (OSError, ValueError):
            continue
        if marker in cmdline and state != "Z":
            found.append(cmdline)
    return found


def test_printed_report_is_only_a_log(make_grader: Callable[..., Grader]) -> None:
    grader = make_grader(["causal_self_attention"], problem_seconds=8.0)
    problem = grader.grade(HOSTILE / "fake_report").problem("causal_self_attention")
    assert '"score": 16' in problem.stdout
    assert problem.score < 8


def test_a_detached_grandchild_ends_with_its_problem(make_grader: Callable[..., Grader]) -> None:
    """It would SIGKILL the children of later problems; it is killed when its problem ends."""
    grader = make_grader(["causal_attention", "split_heads"])
    report = grader.grade(HOSTILE / "detached_grandchild")
    assert report.total == report.max_total
    assert report.problem("causal_attention").message == "1 process(es) it left running were killed"
    assert not leftover_processes(str(grader.workdir))


def test_unreadable_results_are_the_candidates_crash(make_grader: Callable[..., Grader]) -> None:
    """Results too large are the candidate's crash; records made unreadable by a json.dumps the
    candidate changed are malformed, and the change itself tampering."""
    grader = make_grader(["split_heads"])
    report = grader.grade(HOSTILE / "many_tensors")
    problem = report.problem("split_heads")
    assert problem.status is ProblemStatus.crashed, problem.message
    assert "results the grader cannot read (results over" in problem.message
    report = grader.grade(HOSTILE / "deep_json")
    problem = report.problem("split_heads")
    assert problem.status is ProblemStatus.forbidden_api, problem.message
    messages = [c.message for c in problem.checks]
    assert any("json.dumps changed" in m for m in messages), messages
    assert any("malformed: results.bin record 1: JSON nested too deeply" in m for m in messages)
    assert not report.grader_fault


def test_an_import_that_never_finishes_scores_nothing(
    make_grader: Callable[..., Grader], tmp_path: Path
) -> None:
    """An entry file that loops, is killed or exits while importing scores 0, as one whose
    import raises does: its source checks (no forbidden API) do not count for code that never
    ran to its end. A complete submission in the same batch gets full marks."""
    entries = {
        "loops": ("while True:\n    pass\n", ProblemStatus.timeout),
        "killed": (
            "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
            ProblemStatus.crashed,
        ),
        "exits": ("import os\nos._exit(0)\n", ProblemStatus.crashed),
        "raises": ("import sys\nsys.exit(3)\n", ProblemStatus.import_error),
    }
    for name, (code, _) in entries.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "split_heads.py").write_text(code)
    grader = make_grader(["split_heads"], problem_seconds=3.0)
    paths = [tmp_path / name for name in entries] + [ROOT / "submissions" / "complete"]
    reports = {r.submission: r.problem("split_heads") for r in grader.grade_many(paths, jobs=2)}
    assert reports["complete"].score == reports["complete"].max_score
    for name, (_, status) in entries.items():
        problem = reports[name]
        assert (problem.status, problem.score) == (status, 0), (name, problem)
        assert all(c.status is CheckStatus.error for c in problem.checks), name
    assert "never finished (stopped after 3 s)" in reports["loops"].checks[0].message
    assert "never finished (killed by signal 9)" in reports["killed"].checks[0].message


def test_a_problem_finds_nothing_the_problems_before_it_left(
    make_grader: Callable[..., Grader],
) -> None:
    """Each problem of `shares_between_problems` prints its inputs and leaves them wherever it
    can write (the worker's out folder, its own, $HOME, $TMPDIR, the submission's copy); its
    import lists the out folder and searches those places and its cwd's parents for what the
    other problem left. Nothing is found: the problems share only what the worker hands each,
    and the correct code of both keeps its marks, as the control's does."""
    grader = make_grader(["split_heads", "self_attention"])
    paths = [HOSTILE / "shares_between_problems", ROOT / "submissions" / "complete"]
    reports = {r.submission: r for r in grader.grade_many(paths, jobs=1)}
    for problem in reports["complete"].problems:
        assert problem.score == problem.max_score, problem.message
    hostile = reports["shares_between_problems"]
    marks = {"split_heads": "INPUTS-OF-SPLIT-HEADS", "self_attention": "INPUTS-OF-SELF-ATTENTION"}
    for problem in hostile.problems:
        assert problem.score == problem.max_score, problem.message
        assert marks[problem.problem] in problem.stdout  # it saw its inputs and left them
        assert f"OUT HOLDS ['{problem.problem}']" in problem.stdout, problem.stdout
        assert "LEAKED" not in problem.stdout, problem.stdout
