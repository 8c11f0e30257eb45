"""Warm workers against the real engine: a submission graded in the same container just before
another leaves nothing the other can see or suffer.

The attacker plants what it can (a detached process that copies every later file it finds, files
in /tmp, /dev/shm and /out, a POSIX shared memory segment, signal handlers, patched modules,
environment variables) and runs the spy on itself: the control, which proves that each attack
took and that the spy sees it (System V IPC cannot be made, since no program may start and ctypes
is refused; nor can a thread start). Its own later problem starts with /tmp and /dev/shm
emptied. Then the victim is graded in the same container, and the spy after it: the victim's
report equals its report from a container of its own, and the spy sees nothing of the
attacker's. A second attacker lowers the worker's own limits and raises its niceness (prlimit
and setpriority on PID 1): its container is replaced before the next submission.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.reports.models import SubmissionReport
from grader.sandboxing.backends.base import Backend, WorkerJob, WorkerRun
from grader.sandboxing.backends.docker import DockerBackend
from grader.sandboxing.backends.local import LocalBackend
from grader.sandboxing.backends.warm import WarmBackend
from tests.conftest import ROOT

pytestmark = pytest.mark.docker

PROBLEMS = ["self_attention", "causal_attention", "split_heads"]
VICTIM = ROOT / "submissions" / "complete"

SPY = """
import json, math, os, signal, threading, torch

def spy():
    ancestors, pid = set(), os.getpid()
    while pid > 0:
        ancestors.add(pid)
        with open(f"/proc/{pid}/stat") as stat:
            pid = int(stat.read().rsplit(")", 1)[1].split()[1])
    ipc = {}
    for kind in ("shm", "sem", "msg"):
        with open(f"/proc/sysvipc/{kind}") as table:
            ipc[kind] = len(table.readlines()) - 1
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    found = {
        "processes": sorted(set(pids) - ancestors),
        "tmp": sorted(os.listdir("/tmp")),
        "submission": sorted(os.listdir("/tmp/submission")),
        "shm": sorted(os.listdir("/dev/shm")),
        "out": sorted(os.listdir("/out")),
        "ipc": ipc,
        "handlers": {
            s.name: getattr(signal.getsignal(s), "name", "a function")
            for s in (signal.SIGTERM, signal.SIGUSR1)
        },
        "softmax": torch.softmax(torch.zeros(2), 0).tolist(),
        "sqrt": math.sqrt(4.0),
        "threads": len(os.listdir("/proc/self/task")),
        "env": os.environ.get("PLANTED"),
        "nofile": list(__import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE)),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
    }
    print("SPY " + json.dumps(found), flush=True)
"""

ATTACK = """
import _posixshmem, shutil, subprocess, time

if os.fork() == 0:  # a detached thief: copies whatever a later submission brings
    os.setsid()
    if os.fork() == 0:
        while True:
            for source in ("/tmp/submission", "/out"):
                try:
                    shutil.copytree(source, "/dev/shm/loot" + source, dirs_exist_ok=True)
                except Exception:
                    pass
            time.sleep(0.005)
    os._exit(0)
for folder in ("/tmp", "/dev/shm", "/out"):
    with open(f"{folder}/planted", "w") as planted:
        planted.write("left behind")
os.makedirs("/tmp/locked/deeper")
os.chmod("/tmp/locked", 0)
os.mkfifo("/tmp/fifo")
os.close(_posixshmem.shm_open("/posix_planted", os.O_CREAT | os.O_RDWR, 0o600))
try:  # System V IPC needs a system call Python does not wrap: ctypes or a program (ipcmk)
    subprocess.run(["ipcmk", "-M", "4096"], check=True)
except OSError:  # the exec is refused (EPERM), which subprocess may report as a broken pipe
    print("NO-PROGRAMS", flush=True)
signal.signal(signal.SIGTERM, lambda *_: None)
signal.signal(signal.SIGUSR1, lambda *_: None)
torch.softmax = lambda x, dim: x * 0
math.sqrt = lambda x: -1.0
try:
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
except RuntimeError:  # "can't start new thread": the kernel refuses the clone
    print("NO-THREADS", flush=True)
os.environ["PLANTED"] = "1"
time.sleep(0.2)
spy()
"""

LIMITS_ATTACK = """
import resource

resource.prlimit(1, resource.RLIMIT_NOFILE, (32, 32))
print("PRLIMIT", resource.prlimit(1, resource.RLIMIT_NOFILE)[0], flush=True)
os.setpriority(os.PRIO_PROCESS, 1, 10)
"""


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def spied(report: SubmissionReport, problem: str) -> dict[str, Any]:
    stdout = report.problem(problem).stdout
    assert "SPY " in stdout, report.problem(problem)
    found: dict[str, Any] = json.loads(stdout.split("SPY ", 1)[1].splitlines()[0])
    return found


def comparable(report: SubmissionReport) -> dict[str, Any]:
    """The report without when and how long it ran."""
    data = report.model_dump(mode="json", exclude={"run"})
    for problem in data["problems"]:
        problem.pop("seconds")
    return data


class Recording(WarmBackend):
    """The warm backend, noting which container served each run."""

    def __init__(self, image: str) -> None:
        super().__init__(image)
        self.containers: list[str] = []

    def run(self, job: WorkerJob) -> WorkerRun:
        run = super().run(job)
        self.containers.append(run.environment.get("container", ""))
        return run


CLEAN = {
    "processes": [],
    "tmp": ["submission"],
    "submission": ["self_attention.py"],
    "shm": [],
    "out": ["self_attention"],  # worker.json was sent and deleted with the rest
    "ipc": {"shm": 0, "sem": 0, "msg": 0},
    "handlers": {"SIGTERM": "SIG_DFL", "SIGUSR1": "SIG_DFL"},
    "softmax": [0.5, 0.5],
    "sqrt": 2.0,
    "threads": 1,
    "env": None,
    "nofile": [1024, 1024],
    "nice": 0,
}


def test_nothing_of_a_submission_reaches_the_next_in_a_warm_container(
    sandbox_image: str, tmp_path: Path
) -> None:
    catalog = Catalog()
    problems = [catalog.problems[p] for p in PROBLEMS]
    attacker = write(
        tmp_path / "attacker",
        {"self_attention.py": SPY + ATTACK, "causal_attention.py": SPY + "spy()\n"},
    )
    spy_only = write(tmp_path / "spy", {"self_attention.py": SPY + "spy()\n"})
    limits = write(
        tmp_path / "limits",
        {"self_attention.py": SPY + LIMITS_ATTACK, "causal_attention.py": SPY + "spy()\n"},
    )

    alone = Grader(catalog, problems, DockerBackend(sandbox_image), seed=5)
    try:
        victim_alone = alone.grade(VICTIM)
    finally:
        alone.close()
    backend = Recording(sandbox_image)
    grader = Grader(catalog, problems, backend, seed=5)
    try:
        reports = [grader.grade(s) for s in (attacker, VICTIM, spy_only, limits, spy_only)]
    finally:
        grader.close()
    attack, victim, after, lowered, after_limits = reports

    assert backend.containers[0] == backend.containers[1] == backend.containers[2]
    assert victim.run.isolation == "warm" and victim_alone.run.isolation == "container"
    assert victim.total == victim.max_total
    assert comparable(victim) == comparable(victim_alone)

    # the control: every attack took, and the spy sees it
    planted = spied(attack, "self_attention")
    assert planted["processes"] and planted["threads"] == 1  # no thread may start
    assert "NO-THREADS" in attack.problem("self_attention").stdout
    assert {"planted", "locked", "fifo"} <= set(planted["tmp"])
    assert {"planted", "posix_planted"} <= set(planted["shm"]) and "planted" in planted["out"]
    assert planted["ipc"] == {"shm": 0, "sem": 0, "msg": 0}  # no program may start
    assert "NO-PROGRAMS" in attack.problem("self_attention").stdout
    assert planted["handlers"] == {"SIGTERM": "a function", "SIGUSR1": "a function"}
    assert (planted["softmax"], planted["sqrt"], planted["env"]) == ([0.0, 0.0], -1.0, "1")
    later_problem = spied(attack, "causal_attention")
    assert later_problem["tmp"] == ["submission"] and later_problem["shm"] == []

    # the next submissions in that container: nothing of it
    assert spied(after, "self_attention") == CLEAN

    # a lowered limit and a raised niceness on the worker itself: its own later problem starts
    # with the soft limit of a fresh container (the hard limit stays lowered), and the container
    # is replaced before the next submission
    said = lowered.problem("self_attention").stdout
    assert "PRLIMIT 32" in said, said
    inherited = spied(lowered, "causal_attention")
    assert (inherited["nofile"], inherited["nice"]) == ([32, 32], 10)  # the kernel keeps these
    assert backend.containers[3] != backend.containers[4]
    assert spied(after_limits, "self_attention") == CLEAN


SIGNALS = {
    # the problem's parent is the worker, PID 1 of its container: the kernel drops these
    "split_heads.py": (
        "os.kill(os.getppid(), signal.SIGTERM)\nos.kill(os.getppid(), signal.SIGKILL)\n"
    ),
    # the problem's own process group, then every process it may signal: itself dies
    "self_attention.py": "os.killpg(0, signal.SIGKILL)\n",
    "mha_by_loop.py": "os.kill(-1, signal.SIGKILL)\n",
}


def test_a_problem_that_signals_its_parent_or_group_takes_nothing_else_with_it(
    sandbox_image: str, tmp_path: Path
) -> None:
    """A whole submission whose files signal their parent, their process group and every
    process they may: graded warm, its report equals its report from a container of its own,
    where the worker is the problem's parent and PID 1; only the problems that killed
    themselves lose points, and a complete submission after it in the same container gets
    full marks."""
    catalog = Catalog()
    problems = list(catalog.problems.values())
    signaller = tmp_path / "signaller"
    shutil.copytree(VICTIM, signaller)
    for name, attack in SIGNALS.items():
        text = (signaller / name).read_text()
        (signaller / name).write_text("import os, signal\n" + attack + text)

    alone = Grader(catalog, problems, DockerBackend(sandbox_image), seed=7)
    try:
        in_container = alone.grade(signaller)
    finally:
        alone.close()
    backend = Recording(sandbox_image)
    grader = Grader(catalog, problems, backend, seed=7)
    try:
        warm, complete = grader.grade(signaller), grader.grade(VICTIM)
    finally:
        grader.close()

    assert comparable(warm) == comparable(in_container)
    lost = {p.problem for p in warm.problems if p.score < p.max_score}
    assert lost == {"self_attention", "mha_by_loop"}, warm
    assert warm.problem("split_heads").score == warm.problem("split_heads").max_score
    assert complete.total == complete.max_total
    assert backend.containers[0] == backend.containers[1]


REWRITE = """
import pathlib

here = pathlib.Path(__file__).resolve().parent
try:
    (here / "mha_by_loop.py").write_text("raise SystemExit(3)\\n")
    (here / "causal_self_attention.py").unlink()
    (here / "planted.py").write_text("x = 1\\n")
    print("REWROTE")
except OSError as exc:
    print("READ-ONLY", type(exc).__name__)
"""


def test_a_problem_that_rewrites_the_submission_changes_no_other_problem(
    sandbox_image: str, tmp_path: Path
) -> None:
    """A whole submission whose first problem, on import, rewrites a later problem's file,
    deletes another's and plants a file of its own: each later problem still runs on the files
    handed in. Warm (where the files are written in the container's /tmp, which the submission
    can write) and local (a folder the candidate owns), the rewrite takes and is undone before
    the next problem; in a container of its own the folder is mounted read-only. Every report
    gets full marks and they agree."""
    catalog = Catalog()
    problems = list(catalog.problems.values())
    rewriter = tmp_path / "rewriter"
    shutil.copytree(VICTIM, rewriter)
    first = rewriter / "self_attention.py"
    first.write_text(first.read_text() + REWRITE)

    reports: dict[str, SubmissionReport] = {}
    backends: dict[str, Backend] = {
        "container": DockerBackend(sandbox_image),
        "warm": WarmBackend(sandbox_image),
        "local": LocalBackend(),
    }
    for name, backend in backends.items():
        grader = Grader(catalog, problems, backend, seed=9)
        try:
            reports[name] = grader.grade(rewriter)
        finally:
            grader.close()

    said = {name: r.problem("self_attention").stdout.strip() for name, r in reports.items()}
    assert said["container"].startswith("READ-ONLY") and said["warm"] == said["local"] == "REWROTE"
    for report in reports.values():
        assert report.total == report.max_total, report
    views = [comparable(r) for r in reports.values()]
    for view in views:
        assert view["problems"][0]["problem"] == "self_attention"
        view["problems"][0].pop("stdout")
    assert views[0] == views[1] == views[2]
