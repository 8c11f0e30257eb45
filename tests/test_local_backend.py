"""The local backend hides the host environment, kills runaway process groups, and has its
limits and account in place before the candidate's code runs."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from click.testing import CliRunner

from grader.cli.main import cli
from grader.courses.catalog import Catalog
from grader.grade import Grader, start_limit
from grader.reports.models import ProblemReport, Student, SubmissionReport
from grader.reports.redact import candidate_view
from grader.sandboxing.backends import launch
from grader.sandboxing.backends.base import LimitOverrides, WorkerJob, WorkerRun, batch_limits
from grader.sandboxing.backends.local import LocalBackend, NoSuchAccount, Started
from grader.sandboxing.backends.memorygroup import MemoryGroups
from grader.specs.paths import builtin_references
from sandbox.protocol import RESULTS_FILE
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


PROBE = """\
import os
import resource

print("ids", os.getuid(), os.getgid(), len(os.getgroups()))
for name, kind in (
    ("RLIMIT_CPU", resource.RLIMIT_CPU),
    ("RLIMIT_AS", resource.RLIMIT_AS),
    ("RLIMIT_FSIZE", resource.RLIMIT_FSIZE),
    ("RLIMIT_NPROC", resource.RLIMIT_NPROC),
    ("RLIMIT_CORE", resource.RLIMIT_CORE),
):
    print(name, *resource.getrlimit(kind))
with open("/proc/self/status") as status:
    print("VmSize", *(int(line.split()[1]) << 10 for line in status if line.startswith("VmSize:")))
with open("/proc/self/cgroup") as groups:
    print("groups", *(line.strip().rpartition(":")[2] for line in groups if ":memory:" in line))
"""
SPLIT_HEADS = (builtin_references() / "split_heads.py").read_text()


def printed(stdout: str, key: str) -> list[int]:
    line = next(line for line in stdout.splitlines() if line.startswith(key + " "))
    return [int(word) for word in line.split()[1:]]


GROUPS = MemoryGroups.here()


@pytest.fixture(params=["memory_group", "address_space"])
def memory(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How the local worker's memory is bounded: a memory cgroup of its own, where this machine
    lets the grader make one (as root), else its address space capped over torch's start."""
    if request.param == "memory_group" and GROUPS is None:
        pytest.skip("this machine lets the grader make no memory cgroup")
    if request.param == "address_space":
        monkeypatch.setattr(MemoryGroups, "here", lambda: None)
    return str(request.param)


def test_limits_hold_when_candidate_code_starts(
    tmp_path: Path, catalog: Catalog, memory: str
) -> None:
    (tmp_path / "split_heads.py").write_text(PROBE + SPLIT_HEADS)
    with Grader(catalog, catalog.select(["split_heads"]), LocalBackend(), 0) as grader:
        problem = grader.grade(tmp_path).problem("split_heads")
    assert problem.score == problem.max_score
    limits = batch_limits([catalog.problems["split_heads"].spec.limits])
    mb = 1 << 20
    assert printed(problem.stdout, "RLIMIT_CPU") == [limits.cpu_seconds] * 2
    cap, hard = printed(problem.stdout, "RLIMIT_AS")
    assert cap == hard
    if memory == "address_space":
        mapped = printed(problem.stdout, "VmSize")[0]  # the child's, the worker's and imports
        assert 0 < cap - limits.memory_mb * mb <= mapped  # measured: what the worker mapped
    else:
        assert GROUPS is not None and GROUPS.hierarchy.version == 1  # this machine's
        assert cap == resource.RLIM_INFINITY  # bounded by its group, however torch maps
        line = next(line for line in problem.stdout.splitlines() if line.startswith("groups "))
        group = GROUPS.hierarchy.folder / Path(line.split()[1]).name
        assert group.parent == GROUPS.hierarchy.folder and group.name.startswith("attention-")
        assert not group.exists()  # removed with its worker
    assert printed(problem.stdout, "RLIMIT_FSIZE") == [limits.file_size_mb * mb] * 2
    assert printed(problem.stdout, "RLIMIT_CORE") == [0, 0]
    nproc = printed(problem.stdout, "RLIMIT_NPROC")
    assert nproc[0] == nproc[1] != resource.RLIM_INFINITY


def test_launch_sets_limits_before_the_command_runs() -> None:
    settings = {"rlimits": {"RLIMIT_CPU": 7, "RLIMIT_FSIZE": 4096}, "uid": None, "gid": None}
    probe = [sys.executable, "-I", "-S", "-c", PROBE]
    command = [sys.executable, "-I", "-S", launch.__file__, "run", json.dumps(settings), *probe]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert printed(out, "RLIMIT_CPU") == [7, 7]
    assert printed(out, "RLIMIT_FSIZE") == [4096, 4096]


def reachable_by_others(path: Path) -> bool:
    return all(p.stat().st_mode & stat.S_IXOTH for p in path.resolve().parents)


@pytest.mark.skipif(os.geteuid() != 0, reason="switching accounts needs root")
@pytest.mark.skipif(
    not all(reachable_by_others(Path(p)) for p in (sys.executable, torch.__file__)),
    reason="another account cannot reach this interpreter or torch (the Gradescope test can)",
)
def test_candidate_runs_as_the_account_with_its_limits(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in Gradescope: root grades, the account runs the code, under a umask of 077."""
    secret = tmp_path / "secret.txt"
    secret.write_text("root only")
    secret.chmod(0o600)
    escape = (
        "try:\n"
        f"    open({str(secret)!r}).read()\n"
        "    print('read the secret')\n"
        "except PermissionError:\n"
        "    print('secret refused')\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    import time\n"
        "    time.sleep(600)\n"
    )
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "split_heads.py").write_text(PROBE + escape + SPLIT_HEADS)
    nobody = pwd.getpwnam("nobody")
    old_umask = os.umask(0o077)
    try:
        with Grader(catalog, catalog.select(["split_heads"]), LocalBackend("nobody"), 0) as grader:
            problem = grader.grade(submission).problem("split_heads")
    finally:
        os.umask(old_umask)
    assert problem.score == problem.max_score, problem.message
    assert printed(problem.stdout, "ids") == [nobody.pw_uid, nobody.pw_gid, 0]
    assert "secret refused" in problem.stdout
    assert printed(problem.stdout, "RLIMIT_CPU")[0] != resource.RLIM_INFINITY


DETACHED = """
import os, time

for _ in range({count}):
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() == 0:
            with open({pids!r}, "a") as f:
                f.write(f"{{os.getpid()}}\\n")
            time.sleep(600)
        os._exit(0)
    os.waitpid(child, 0)  # only the orphaned grandchild is left, whenever the problem ends


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
    grader = make_grader(["split_heads"])
    problem = grader.grade(submission).problem("split_heads")
    assert problem.score == problem.max_score, problem.message
    assert problem.message == "20 process(es) it left running were killed"
    started = [int(line) for line in pids.read_text().split()]
    assert len(started) == 20
    assert not leftover_processes(str(grader.workdir))
    if grader.environment.get("pid_namespace") != "its own":  # else the pids are the namespace's
        assert not [pid for pid in started if Path(f"/proc/{pid}").exists()]


def test_an_interrupt_stops_the_batch_at_once(
    make_grader: Callable[..., Grader], tmp_path: Path
) -> None:
    """Ctrl-C (here raised when the first report arrives) kills the running workers, starts no
    more, and reaches the caller before the hung problems could time out (their limit is long
    enough that no loaded machine takes as long)."""
    problem_seconds = 300.0
    grader = make_grader(["causal_self_attention"], problem_seconds=problem_seconds)
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
    assert time.monotonic() - start < problem_seconds
    assert graded == ["complete"]
    assert not leftover_processes(str(grader.workdir))


class InterruptedLookup(dict[Path, Student]):
    """The students of a batch, whose lookup of the `at`-th submission is hit by Ctrl-C: the
    signal lands while the batch is still handing its submissions out."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.left = at

    def __bool__(self) -> bool:
        return True  # a batch's students, though none is known

    def get(self, key: Path, default: Any = None) -> Any:
        self.left -= 1
        if self.left == 0:
            time.sleep(1)  # the first submission is running by now
            raise KeyboardInterrupt
        return default


def test_an_interrupt_while_submissions_are_handed_out_stops_the_batch_at_once(
    make_grader: Callable[..., Grader],
) -> None:
    """Ctrl-C before the batch waits for its first report still stops the running workers: the
    interrupt reaches the caller before the hung problem could time out."""
    problem_seconds = 300.0
    grader = make_grader(["causal_self_attention"], problem_seconds=problem_seconds)
    batch = [Path(__file__).parent / "hostile" / "infinite_loop"] * 3
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        grader.grade_many(batch, jobs=2, students=InterruptedLookup(at=2))
    assert time.monotonic() - start < problem_seconds
    assert not leftover_processes(str(grader.workdir))


def test_a_worker_started_ahead_takes_the_first_job_with_its_limits(
    tmp_path: Path, catalog: Catalog
) -> None:
    """The ready worker grades the first job of its limits (the limits printed from inside the
    candidate's code are its own) and leaves no folder; a second job gets a worker of its own."""
    (tmp_path / "split_heads.py").write_text(PROBE + SPLIT_HEADS)
    limits = batch_limits([catalog.problems["split_heads"].spec.limits])
    backend = LocalBackend(ready=limits)
    ready = backend._ready
    assert ready is not None and ready.proc.poll() is None
    with Grader(catalog, [catalog.problems["split_heads"]], backend, seed=1) as grader:
        first = grader.grade(tmp_path).problem("split_heads")
        assert not ready.home.exists() and ready.proc.returncode is not None
        second = grader.grade(tmp_path).problem("split_heads")
    assert first.score == second.score == first.max_score
    for stdout in (first.stdout, second.stdout):
        assert printed(stdout, "RLIMIT_CPU") == [limits.cpu_seconds] * 2


def test_a_worker_started_ahead_for_other_limits_is_ended_and_never_used(
    tmp_path: Path, catalog: Catalog
) -> None:
    (tmp_path / "split_heads.py").write_text(PROBE + SPLIT_HEADS)
    other = batch_limits([catalog.problems["split_heads"].spec.limits] * 2)
    backend = LocalBackend(ready=other)
    ready = backend._ready
    assert ready is not None
    with Grader(catalog, [catalog.problems["split_heads"]], backend, seed=1) as grader:
        problem = grader.grade(tmp_path).problem("split_heads")
    assert problem.score == problem.max_score
    assert ready.proc.returncode is not None and not ready.home.exists()
    unused = LocalBackend(ready=other)
    assert unused._ready is not None
    started = unused._ready
    unused.close()
    assert started.proc.returncode is not None and not started.home.exists()


def test_check_starts_its_worker_before_the_host_imports_torch(tmp_path: Path) -> None:
    """`grader check`'s worker imports torch while the host does: it is started first."""
    (tmp_path / "split_heads.py").write_text(SPLIT_HEADS)
    script = f"""
import sys
from pathlib import Path
from grader.sandboxing.backends import local

spawned = []
start = local.LocalBackend._start
def recording(self, *args):
    spawned.append("torch" in sys.modules)
    return start(self, *args)
local.LocalBackend._start = recording

from grader import api
feedback = api.check(Path({str(tmp_path)!r}), backend=api.BackendName.local)
print(spawned, feedback.view.total == feedback.view.max_total > 0)
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[False]", "True"]


def test_a_worker_started_ahead_that_ended_before_its_job_is_replaced(
    tmp_path: Path, catalog: Catalog
) -> None:
    (tmp_path / "split_heads.py").write_text(SPLIT_HEADS)
    backend = LocalBackend(ready=batch_limits([catalog.problems["split_heads"].spec.limits]))
    ready = backend._ready
    assert ready is not None
    ready.proc.kill()
    ready.proc.wait()
    with Grader(catalog, [catalog.problems["split_heads"]], backend, seed=1) as grader:
        problem = grader.grade(tmp_path).problem("split_heads")
    assert problem.score == problem.max_score, problem.message
    assert not ready.home.exists()


def test_check_ends_its_worker_started_ahead_when_grading_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken reference is a grader error: the worker started ahead does not outlive it."""
    from grader import api, grade
    from grader.errors import GraderFault

    (tmp_path / "split_heads.py").write_text(SPLIT_HEADS)
    started: list[Started] = []
    start = LocalBackend._start

    def recording(self: LocalBackend, *args: Any) -> Started:
        started.append(start(self, *args))
        return started[-1]

    def broken(*args: Any) -> Any:
        raise GraderFault("the reference failed its own probe")

    monkeypatch.setattr(LocalBackend, "_start", recording)
    monkeypatch.setattr(grade, "prepare", broken)
    with pytest.raises(GraderFault):
        api.check(tmp_path, backend=api.BackendName.local)
    assert len(started) == 1
    assert started[0].proc.returncode is not None and not started[0].home.exists()


def test_a_batch_runs_jobs_workers_at_a_time_and_judges_while_the_next_runs(
    tmp_path: Path, catalog: Catalog
) -> None:
    """With `jobs=1`, no two workers run at once, yet the next submission's worker starts
    while the last one is being judged; every report is still full marks."""
    events: list[tuple[str, str, float]] = []

    class Logged(LocalBackend):
        def run(self, job: WorkerJob) -> WorkerRun:
            events.append(("run", "start", time.monotonic()))
            try:
                return super().run(job)
            finally:
                events.append(("run", "end", time.monotonic()))

    class Judging(Grader):
        def judge(self, *args: Any, **kwargs: Any) -> dict[str, ProblemReport]:
            events.append(("judge", "start", time.monotonic()))
            time.sleep(0.5)  # a long judgement: the next worker must not wait for it
            try:
                return super().judge(*args, **kwargs)
            finally:
                events.append(("judge", "end", time.monotonic()))

    batch = []
    for index in range(3):
        (tmp_path / f"s{index}").mkdir()
        (tmp_path / f"s{index}" / "split_heads.py").write_text(SPLIT_HEADS)
        batch.append(tmp_path / f"s{index}")
    with Judging(catalog, [catalog.problems["split_heads"]], Logged(), seed=1) as grader:
        reports = grader.grade_many(batch, jobs=1)
    assert [r.total for r in reports] == [r.max_total for r in reports]
    running = most = 0
    for kind, edge, _ in sorted(events, key=lambda e: e[2]):
        if kind == "run":
            running += 1 if edge == "start" else -1
            most = max(most, running)
    assert most == 1
    ends = sorted(t for kind, edge, t in events if (kind, edge) == ("judge", "end"))
    starts = sorted(t for kind, edge, t in events if (kind, edge) == ("run", "start"))
    assert len(starts) == len(ends) == 3
    assert all(start < end for start, end in zip(starts[1:], ends, strict=False)), events


def test_a_process_left_by_one_submission_cannot_touch_another(catalog: Catalog) -> None:
    """A detached process that SIGKILLs every process it sees start (the cause of a correct
    submission's problems killed within milliseconds of starting) lives while a complete
    submission is graded beside it: in PID namespaces of their own, it sees none of them."""
    backend = LocalBackend()
    if not backend.namespace:
        pytest.skip("this machine lets no unprivileged account make a PID namespace")
    haunter = Path(__file__).parent / "hostile" / "haunts_others"
    control = Path(__file__).parents[1] / "submissions" / "complete"
    with Grader(catalog, list(catalog.problems.values()), backend, 0) as grader:
        reports = grader.grade_many([haunter, control], jobs=2)
    assert backend.describe()["pid_namespace"] == "its own"
    assert reports[1].total == reports[1].max_total, [
        (p.problem, p.message) for p in reports[1].problems if p.score < p.max_score
    ]
    assert (
        reports[0].problem("causal_attention").score
        == reports[0].problem("causal_attention").max_score
    )


@pytest.mark.parametrize(
    "command",
    [
        ["gradescope", "run", "{sub}", "--results", "{out}/results.json"],
        ["classroom50", "run", "{sub}", "--out", "{out}"],
    ],
)
def test_an_unknown_account_is_one_error_line(tmp_path: Path, command: list[str]) -> None:
    """`--user` naming no account: one line, `Error: ...`, exit 2; nothing graded."""
    with pytest.raises(NoSuchAccount, match="no account named 'nosuchuser'"):
        LocalBackend("nosuchuser")
    (tmp_path / "split_heads.py").write_text("x = 1\n")
    args = [a.format(sub=tmp_path, out=tmp_path / "out") for a in command]
    result = CliRunner().invoke(cli, [*args, "--user", "nosuchuser"])
    assert result.exit_code == 2, result.output
    assert result.output == "Error: no account named 'nosuchuser' on this machine (--user)\n"
    assert not (tmp_path / "out").exists()


OUT_FOLDER_ATTACK = """\
import json, os

args = open("/proc/self/cmdline", "rb").read().split(b"\\0")
out = args[args.index(b"--out") + 1].decode()
os.unlink(out + "/split_heads/stdout.txt")
os.mkfifo(out + "/split_heads/stdout.txt")
os.unlink(out + "/split_heads/stderr.txt")
os.symlink({secret!r}, out + "/split_heads/stderr.txt")
with open(out + "/worker.json", "w") as forged:
    json.dump({{"version": 999, "torch": "0", "python": "0"}}, forged)
open({mark!r}, "w").write("done")
"""


def test_what_a_problem_leaves_in_its_out_folder_is_never_read(
    tmp_path: Path, catalog: Catalog
) -> None:
    """A problem replaces its stdout with a FIFO (opened as it is, it would hold the grader for
    ever), its stderr with a link to a file of the grader's, and the worker's `worker.json`
    with another protocol (a grader error for the whole submission): the worker's results come
    on its stream, never read from that folder. The attack did all three; it gets its verdict,
    the control beside it full marks."""
    secret, mark = tmp_path / "secret.txt", tmp_path / "attacked"
    secret.write_text("the grader's own file")
    attacker, control = tmp_path / "attacker", tmp_path / "control"
    for folder in (attacker, control):
        folder.mkdir()
    attack = OUT_FOLDER_ATTACK.format(secret=str(secret), mark=str(mark))
    (attacker / "split_heads.py").write_text(attack + SPLIT_HEADS)
    (control / "split_heads.py").write_text(SPLIT_HEADS)
    with Grader(catalog, [catalog.problems["split_heads"]], LocalBackend(), 0) as grader:
        reports = grader.grade_many([attacker, control], jobs=2)
    assert mark.read_text() == "done"
    assert reports[1].total == reports[1].max_total
    attacked = reports[0].problem("split_heads")
    assert not reports[0].grader_fault, attacked.message
    assert attacked.score == attacked.max_score, attacked.message
    assert "grader's own file" not in reports[0].model_dump_json()


HOG = """\
held = b"x" * (700 << 20)  # more than the submission may use: stopped at import
"""


def test_memory_is_a_budget_over_what_the_worker_maps_to_start(tmp_path: Path, memory: str) -> None:
    """--memory-mb bounds the memory the worker uses, not the address space torch maps: 512 MB is
    far below what torch maps when imported (a constant cap of 512 MB stopped every worker
    before any candidate code), yet a submission filling 700 MB is stopped: killed at its
    memory group's limit, and told so, or refused the address space (a MemoryError)."""
    batch = tmp_path / "batch"
    for name, prefix in (("control", ""), ("hog", HOG)):
        (batch / name).mkdir(parents=True)
        (batch / name / "split_heads.py").write_text(prefix + SPLIT_HEADS)
    args = ["grade", str(batch), "--out", str(tmp_path / "out"), "--backend", "local"]
    CliRunner().invoke(cli, [*args, "--memory-mb", "512"], catch_exceptions=False)
    control = SubmissionReport.model_validate_json((tmp_path / "out/control.json").read_text())
    hog = SubmissionReport.model_validate_json((tmp_path / "out/hog.json").read_text())
    assert control.problem("split_heads").score == control.problem("split_heads").max_score > 0
    stopped = hog.problem("split_heads")
    if memory == "address_space":
        assert stopped.status == "import_error"
        assert "MemoryError" in str(stopped.model_dump())
    else:
        assert stopped.status == "crashed"
        assert "killed at the memory limit that --memory-mb sets" in stopped.checks[0].message
        assert hog.message == "the worker ran out of memory"
        assert control.run.environment["memory_limit"] == "a memory cgroup (v1)"


@pytest.mark.parametrize(
    ("run", "told"),
    [
        (WorkerRun(exit_code=1, stderr="...\nMemoryError\n"), "memory limit (4096 MB"),
        (WorkerRun(exit_code=127, stderr="cannot allocate memory for thread-local data: ABORT"),
         "raise it with --memory-mb"),
        (WorkerRun(exit_code=-signal.SIGXCPU), "its CPU limit (120 s)"),
        (WorkerRun(exit_code=1, stderr="RuntimeError: can't start new thread"), "process count"),
        (WorkerRun(exit_code=1, stderr="ImportError: no module named torch"), None),
    ],
)  # fmt: skip
def test_a_worker_that_cannot_start_names_the_limit_that_stopped_it(
    run: WorkerRun, told: str | None, catalog: Catalog
) -> None:
    said = start_limit(run, LimitOverrides(memory_mb=4096), [catalog.problems["split_heads"]])
    assert (told in said and "\n" not in said) if told else said == ""


ASKS_FOR_A_GPU = """\
import os
import torch

print("visible", repr(os.environ.get("CUDA_VISIBLE_DEVICES")), torch.cuda.is_available())


def split_heads(x, num_heads):
    device = torch.device("cuda")  # written on a GPU machine
    B, T, C = x.shape
    return x.to(device).reshape(B, T, num_heads, C // num_heads).transpose(1, 2)
"""


def test_code_that_asks_for_a_gpu_is_told_grading_runs_on_the_cpu(
    tmp_path: Path, make_grader: Callable[..., Grader]
) -> None:
    """The candidate's process sees no GPU (the contract is the CPU's), and code written for one
    is told so, in the candidate's own view too, rather than given a CUDA driver error alone."""
    (tmp_path / "split_heads.py").write_text(
        ASKS_FOR_A_GPU + SPLIT_HEADS[SPLIT_HEADS.index("\n\n\ndef merge_heads") :]
    )
    report = make_grader(["split_heads"]).grade(tmp_path)
    problem = report.problem("split_heads")
    assert "visible '' False" in problem.stdout
    assert problem.score < problem.max_score
    view = candidate_view(report, False)
    raised = [c for c in view.problem("split_heads").checks if "the call raised" in c.message]
    assert raised
    assert all("grading runs on the CPU" in c.message for c in raised)


MARKER_ATTACK = """\
import contextlib
import json
import os
from pathlib import Path

out = Path(os.readlink("/proc/self/fd/1")).parent.parent  # the worker's out folder
for marker in out.glob("*/started"):
    marker.unlink()  # every problem: "the worker failed before running any candidate code"
for record in out.glob("*/exit.json"):  # an earlier problem's: "timeout"
    record.write_text(json.dumps(dict(exit_code=None, signal=None, timed_out=True, seconds=30)))
Path({mark!r}).write_text(str(sorted(p.name for p in out.iterdir())))
"""


def test_markers_and_exit_records_come_from_the_workers_own_stream(
    tmp_path: Path, catalog: Catalog
) -> None:
    """The last problem's code deletes every problem's `started` marker and rewrites an earlier
    problem's `exit.json`: on the local backend (Gradescope's and Classroom 50's, as another
    account) they are files the candidate's account can write, and every problem became a grader
    error (no score at all on those platforms). The worker now sends each file down its own
    stream as it is final, and the host reads only the stream: the attack changes nothing."""
    mark = tmp_path / "attacked"
    attacker, control = tmp_path / "attacker", tmp_path / "control"
    for folder in (attacker, control):
        folder.mkdir()
        shutil.copy(builtin_references() / "self_attention.py", folder / "self_attention.py")
        (folder / "split_heads.py").write_text(SPLIT_HEADS)
    split_heads = attacker / "split_heads.py"
    split_heads.write_text(MARKER_ATTACK.format(mark=str(mark)) + SPLIT_HEADS)
    problems = [catalog.problems[p] for p in ("self_attention", "split_heads")]
    with Grader(catalog, problems, LocalBackend(), 0) as grader:
        reports = grader.grade_many([attacker, control], jobs=2)
    assert mark.is_file()  # the attack ran, in the last problem
    for report in reports:
        assert not report.grader_fault
        for problem in report.problems:
            assert problem.score == problem.max_score, (report.submission, problem.message)


REPLAY = """\
import os
import shutil
from pathlib import Path

folder = Path(os.readlink("/proc/self/fd/1")).parent  # this problem's out folder
for name in ("import.json", "results.bin"):
    shutil.copyfile(Path({harvest!r}) / name, folder / name)


def split_heads(x, num_heads):
    os._exit(0)  # no record of its own after the replayed ones


def merge_heads(x):
    os._exit(0)
"""


def test_records_sealed_for_one_submission_are_refused_for_another(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A submission hands in the sealed records of another's run in the same batch (its own
    correct one, graded first): they were sealed for that run alone, so they count for nothing
    here. The seals bound a problem, not a submission: the replay scored 13/13 with no
    split_heads at all."""
    harvest, correct, replayer = tmp_path / "harvest", tmp_path / "correct", tmp_path / "replay"
    for folder in (harvest, correct, replayer):
        folder.mkdir()
    (correct / "split_heads.py").write_text(SPLIT_HEADS)
    (replayer / "split_heads.py").write_text(REPLAY.format(harvest=str(harvest)))
    judge = Grader.judge

    def harvesting(grader: Grader, attempted: Any, run: Any, scratch: Path, *more: Any) -> Any:
        if not (harvest / RESULTS_FILE).exists():
            for name in ("import.json", RESULTS_FILE):
                shutil.copyfile(scratch / "out" / "split_heads" / name, harvest / name)
        return judge(grader, attempted, run, scratch, *more)

    monkeypatch.setattr(Grader, "judge", harvesting)
    with Grader(catalog, [catalog.problems["split_heads"]], LocalBackend(), 0) as grader:
        first, control, replayed = (grader.grade(f) for f in (correct, correct, replayer))
    assert first.total == control.total == first.max_total
    problem = replayed.problem("split_heads")
    assert problem.score < problem.max_score
    assert "not sealed by the grader's worker" in problem.message


@pytest.mark.skipif(os.geteuid() != 0, reason="switching accounts needs root")
def test_a_worker_of_its_own_account_clears_only_that_accounts_entries() -> None:
    """A folder every account writes (as /tmp): before each problem, a worker running as an
    account of its own removes what that account left there (a file, a locked folder), and
    nothing of another account's."""
    from sandbox.folders import MAX_CLEANUP_ENTRIES, clear

    with tempfile.TemporaryDirectory() as top:  # in /tmp: the account can reach it
        shared = Path(top) / "shared"
        shared.mkdir()
        shared.chmod(0o1777)
        Path(top).chmod(0o755)
        (shared / "roots.txt").write_text("another account's")
        nobody = pwd.getpwnam("nobody")
        pid = os.fork()
        if pid == 0:  # as the account: leave files, then clear
            code = 1
            try:
                os.setgid(nobody.pw_gid)
                os.setuid(nobody.pw_uid)
                (shared / "left.txt").write_text("problem 1's inputs")
                (shared / "locked" / "deep").mkdir(parents=True)
                (shared / "locked" / "deep" / "x").write_text("y")
                (shared / "locked").chmod(0)
                clear(shared, MAX_CLEANUP_ENTRIES)
                code = 0
            finally:
                os._exit(code)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        assert sorted(p.name for p in shared.iterdir()) == ["roots.txt"]


@pytest.mark.skipif(GROUPS is None, reason="this machine lets the grader make no memory cgroup")
def test_the_memory_group_a_killed_grader_left_is_removed_by_the_next() -> None:
    assert GROUPS is not None
    left = GROUPS.hierarchy.folder / "attention-grader-4194305-1"  # above any pid this kernel gives
    left.mkdir()
    mine = GROUPS.make(64 << 20)
    assert mine is not None
    try:
        assert MemoryGroups.here() is not None
        assert not left.exists() and mine.folder.exists()  # a running grader's is kept
    finally:
        mine.remove()
        with contextlib.suppress(FileNotFoundError):
            left.rmdir()
