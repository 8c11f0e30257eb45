"""Attacks written against the grader's own design, in the real sandbox: each hostile submission
is graded beside the complete example, which must keep full marks, and leaves no container."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.models import ProblemStatus, SubmissionReport
from grader.sandboxing.backends.docker import DockerBackend
from tests import whole
from tests.conftest import ROOT
from tests.docker.engine import process_containers, sandbox_containers

pytestmark = pytest.mark.docker

HOSTILE = ROOT / "tests" / "hostile"
CONTROL = ROOT / "submissions" / "complete"


def grade_beside_the_control(image: str, attack: str) -> tuple[SubmissionReport, float]:
    """The attack's report and the batch's wall time; the control must score full marks."""
    catalog = Catalog()
    with Grader(catalog, list(catalog.problems.values()), DockerBackend(image), seed=3) as grader:
        start = time.monotonic()
        report, control = grader.grade_many([HOSTILE / attack, CONTROL], jobs=2)
    assert control.total == control.max_total == whole.full_marks(Catalog()), control.problems
    assert not report.grader_fault, report.problems
    return report, time.monotonic() - start


def test_no_process_but_the_worker_can_write_the_result_stream(sandbox_image: str) -> None:
    """Writing an 8 MiB pax header to /proc/1/fd/1 (docker-init's stdout) made Python's tarfile
    on the host spin for hours (CVE-2024-6232); now PID 1 is the worker, which no process of
    the container can open, and the host reads only plain ustar."""
    report, seconds = grade_beside_the_control(sandbox_image, "result_channel")
    problem = report.problem("causal_self_attention")
    assert problem.score == problem.max_score, problem.message
    assert "PermissionError" in problem.stdout and "written" not in problem.stdout
    assert seconds < 60


def test_a_detached_grandchild_cannot_reach_a_later_problem(sandbox_image: str) -> None:
    """It left its session and its parent to SIGKILL the children of later problems."""
    report, _ = grade_beside_the_control(sandbox_image, "detached_grandchild")
    causal, later = report.problem("causal_attention"), report.problem("split_heads")
    assert causal.score == causal.max_score
    assert causal.message == "1 process(es) it left running were killed"
    assert (later.status, later.score) == (ProblemStatus.graded, later.max_score), later.message


@pytest.mark.parametrize(
    ("attack", "reason"),
    [("deep_json", "nested too deeply"), ("many_tensors", "over")],
)
def test_unreadable_results_are_the_candidates_crash(
    sandbox_image: str, attack: str, reason: str
) -> None:
    """A probe file nested 100000 deep (by a json.dumps the candidate changed, which is also
    tampering), or a 62 MB safetensors header of 1.1 M tensors."""
    report, seconds = grade_beside_the_control(sandbox_image, attack)
    problem = report.problem("split_heads")
    said = [problem.message, *(c.message for c in problem.checks)]
    if attack == "deep_json":
        assert problem.status is ProblemStatus.forbidden_api
        assert any("json.dumps changed" in m for m in said), said
    else:
        assert problem.status is ProblemStatus.crashed
    assert any(reason in m and ("cannot read" in m or "malformed" in m) for m in said), said
    assert seconds < 60


def test_a_problem_sees_only_its_own_probes(sandbox_image: str) -> None:
    """The spy searched the filesystem, every process's descriptors and memory, and its own
    memory, for the tensor names of every problem of the job."""
    report, _ = grade_beside_the_control(sandbox_image, "reads_job")
    stdout = report.problem("causal_attention").stdout
    spy = json.loads(stdout.split("SPY ", 1)[1].splitlines()[0])
    assert set(spy["found"]) <= {"causal_attention"}, spy  # its own memory at most
    assert spy["errors"]["fd 1"] == spy["errors"]["mem 1"] == "PermissionError"
    assert spy["errors"]["dumpable"] == "Refused"  # ctypes, refused by the audit hook
    for other in ("self_attention", "split_heads"):
        assert report.problem(other).score == report.problem(other).max_score


def a_terminal() -> None:
    """What a command typed at a terminal finds, whatever ran the tests (a shell's background
    job ignores Ctrl-C, by convention, and so would the grader)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def ignoring_and_blocking_sigterm() -> None:
    """What some parents leave their children: SIGTERM ignored and blocked."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def grade_command(image: str, batch: Path, out: Path, *options: str) -> list[str]:
    return [
        sys.executable, "-c", "from grader.cli.main import main; main()", "grade", str(batch),
        "--backend", "docker", "--image", image, "--jobs", "2",
        "--problem", "causal_self_attention", "--out", str(out), *options,
    ]  # fmt: skip


def wait_for_containers(proc: subprocess.Popen[str], count: int) -> None:
    deadline = time.monotonic() + 120
    while len(process_containers(proc.pid)) < count:
        assert time.monotonic() < deadline, "the containers never appeared"
        assert proc.poll() is None, "the grader exited early"
        time.sleep(0.2)


@contextmanager
def busy_batch(image: str, tmp_path: Path, busy: bool) -> Iterator[None]:
    """A batch of complete submissions graded beside the test, each in a container of its own:
    the engine creates, starts and removes containers all along, and the CPU is taken. It is
    stopped by SIGTERM once the test is done, and must stop as cleanly."""
    if not busy:
        yield
        return
    batch = tmp_path / "busy"
    for copy in range(40):
        shutil.copytree(CONTROL, batch / f"complete{copy}")
    command = grade_command(image, batch, tmp_path / "busy-reports", "--isolation", "container")
    proc = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_containers(proc, 1)
        yield
        assert proc.poll() is None, "the busy batch ended before the test did"
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "stopping it now" not in stderr, stderr
    assert process_containers(proc.pid) == [], stderr


@pytest.mark.parametrize("busy", [False, True], ids=["alone", "beside_a_busy_batch"])
@pytest.mark.parametrize(
    ("running", "sig", "parent"),
    [
        (1, signal.SIGINT, a_terminal),
        (1, signal.SIGTERM, a_terminal),
        (2, signal.SIGINT, a_terminal),
        (2, signal.SIGTERM, a_terminal),
        (1, signal.SIGTERM, ignoring_and_blocking_sigterm),
    ],
)
def test_a_signal_stops_the_batch_and_leaves_no_container(
    sandbox_image: str,
    tmp_path: Path,
    running: int,
    sig: signal.Signals,
    parent: Callable[[], None],
    busy: bool,
) -> None:
    """Ctrl-C or SIGTERM while one container starts or while two run, SIGTERM also where the
    parent left it ignored and blocked, alone or beside a busy batch (whose engine takes its
    time to create and start the grader's containers): the grader stops by itself with the
    signal's status, writes no report, and no container of its own is left or started after."""
    batch = tmp_path / "batch"
    for copy in range(4):
        shutil.copytree(HOSTILE / "infinite_loop", batch / f"loop{copy}")
    command = grade_command(sandbox_image, batch, tmp_path / "reports")
    with busy_batch(sandbox_image, tmp_path, busy):
        proc = subprocess.Popen(
            command, cwd=ROOT, stderr=subprocess.PIPE, text=True, preexec_fn=parent
        )
        try:
            wait_for_containers(proc, running)
            proc.send_signal(sig)
            _, stderr = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 128 + sig, stderr
        assert "stopping it now" not in stderr, stderr  # it stopped by itself
        assert process_containers(proc.pid) == [], stderr
        time.sleep(2)
        assert process_containers(proc.pid) == [], "a container was started after the signal"
    assert not list((tmp_path / "reports").glob("loop*.json"))


STUCK = """
import sys, threading, time
from grader.sandboxing import signals
from grader.sandboxing.backends.cleanup import Run
from grader.sandboxing.engine import client
signals.STOP_SECONDS = float(sys.argv[2])
signals.take()
run = Run()
create = lambda: client().containers.create(sys.argv[1], ["sleep", "600"], labels=run.labels)
run.call(create, threading.Event())
ready = False
while True:  # a main thread that swallows what the signal raises: the grader hung
    try:
        if not ready:  # said from within: a signal that came before would end the script
            ready = True
            print("ready", flush=True)
        time.sleep(60)
    except BaseException:
        pass
"""


@pytest.mark.parametrize(("signals", "stop_seconds"), [(1, 2.0), (2, 600.0)])
def test_a_grader_that_does_not_stop_after_a_signal_is_stopped_by_force(
    sandbox_image: str, signals: int, stop_seconds: float
) -> None:
    """Whatever holds the grader up after Ctrl-C or SIGTERM, it ends: `STOP_SECONDS` after the
    first signal, or at once on a second (here the first would wait longer than the test), with
    its threads' stacks on stderr, its containers removed and the first signal's status."""
    command = [sys.executable, "-c", STUCK, sandbox_image, str(stop_seconds)]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        assert len(sandbox_containers()) == 1
        for _ in range(signals):
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.5)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = stderr.decode()
    assert proc.returncode == 128 + signal.SIGTERM, said
    assert "stopping it now" in said and "most recent call first" in said, said
    assert sandbox_containers() == [], said
