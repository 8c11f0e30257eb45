"""DockerBackend against the real engine: results flow back, hostile payloads stay contained."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file

from grader.cli.platforms import sandbox as sandbox_group
from grader.sandboxing.backends.base import Limits, WorkerJob, WorkerRun
from grader.sandboxing.backends.docker import (
    SANDBOX_UID,
    STARTUP_GRACE_SECONDS,
    DockerBackend,
    unavailable_reason,
)
from grader.sandboxing.engine import LABEL, client
from grader.sandboxing.paths import worker_sha256
from grader.sandboxing.protocol import encode_job, problem_part, result_names
from sandbox.protocol import ProblemJob
from tests.conftest import ROOT as REPO_ROOT
from tests.docker.engine import sandbox_containers

pytestmark = pytest.mark.docker
MIB = 1 << 20

PRELUDE = textwrap.dedent(
    """
    import errno, json, os, sys, tarfile

    def record(**facts):
        with open("/out/result.json", "w") as f:
            json.dump(facts, f)

    def emit():
        out = os.fdopen(1, "wb", closefd=False)
        with tarfile.open(fileobj=out, mode="w|", format=tarfile.USTAR_FORMAT) as archive:
            for folder, _, files in os.walk("/out"):
                for name in files:
                    path = os.path.join(folder, name)
                    archive.add(path, arcname=os.path.relpath(path, "/out"))
        out.flush()
    """
)
OUTPUTS = frozenset({"result.json", "p1/probe.safetensors"})


PAYLOAD_COMMAND = ("python3", "/submission/payload.py")


@dataclass
class Sandbox:
    """Runs a Python payload as the container's worker, through `DockerBackend.run`."""

    image: str
    root: Path

    def run(self, payload: str, limits: Limits | None = None) -> tuple[WorkerRun, Path]:
        sub_dir, out_dir = self.root / "submission", self.root / "out"
        sub_dir.mkdir(exist_ok=True)
        (sub_dir / "payload.py").write_text(PRELUDE + textwrap.dedent(payload))
        backend = DockerBackend(self.image, command=PAYLOAD_COMMAND)
        job = WorkerJob(sub_dir, b"", out_dir, limits or Limits(), OUTPUTS)
        return backend.run(job), out_dir


@pytest.fixture
def sandbox(sandbox_image: str, tmp_path: Path) -> Sandbox:
    return Sandbox(sandbox_image, tmp_path)


def result(out_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out_dir / "result.json").read_text())
    return data


def test_describe_reports_image_id_and_torch(sandbox_image: str) -> None:
    facts = DockerBackend(sandbox_image).describe()
    assert facts["image_id"] == client().images.get(sandbox_image).id
    assert facts["torch_version"] == "2.13.0"
    assert facts["backend"] == "docker"


def test_image_holds_the_current_worker(sandbox_image: str) -> None:
    facts = DockerBackend(sandbox_image).describe()
    assert facts["worker_sha256"] == worker_sha256(), (
        "sandbox image is stale: rebuild it (scripts/ci-docker.sh)"
    )


def test_results_come_back_and_the_process_is_unprivileged(sandbox: Sandbox) -> None:
    os.environ["GRADER_TEST_HOST_MARKER"] = "leak"
    try:
        run, out = sandbox.run(
            """
            import torch
            from safetensors.torch import save_file
            os.makedirs("/out/p1")
            save_file({"y": torch.arange(6.0).reshape(2, 3)}, "/out/p1/probe.safetensors")
            status = dict(
                line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines()
                if ":\\t" in line
            )
            def first(*paths):
                for p in paths:
                    if os.path.exists(p):
                        return open(p).read().strip()
            record(
                uid=os.getuid(), gid=os.getgid(), groups=os.getgroups(),
                caps=[status[k].strip() for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb")],
                no_new_privs=status["NoNewPrivs"].strip(),
                env=dict(os.environ), torch=torch.__version__,
                memory=first("/sys/fs/cgroup/memory.max",
                             "/sys/fs/cgroup/memory/memory.limit_in_bytes"),
                pids=first("/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"),
                nofile=__import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE),
            )
            print("to stderr", file=sys.stderr)
            emit()
            """,
            Limits(memory_mb=1024, pids=48),
        )
    finally:
        del os.environ["GRADER_TEST_HOST_MARKER"]
    assert (run.exit_code, run.fault, run.output_error) == (0, None, None)
    assert not run.timed_out and not run.oom_killed
    assert "to stderr" in run.stderr
    tensors = load_file(str(out / "p1" / "probe.safetensors"))
    assert tensors["y"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    facts = result(out)
    assert (facts["uid"], facts["gid"]) == (SANDBOX_UID, SANDBOX_UID)
    assert [int(c, 16) for c in facts["caps"]] == [0, 0, 0, 0]
    assert facts["no_new_privs"] == "1"
    assert "GRADER_TEST_HOST_MARKER" not in facts["env"]
    assert facts["env"]["HOME"] == "/tmp" and facts["env"]["OMP_NUM_THREADS"] == "1"
    assert facts["torch"].startswith("2.13.0")
    assert int(facts["memory"]) == 1024 * MIB
    assert int(facts["pids"]) == 48
    assert facts["nofile"] == [1024, 1024]


def test_no_network_and_no_way_to_the_host(sandbox: Sandbox) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        run, out = sandbox.run(
            f"""
            import socket
            s = socket.socket()
            s.settimeout(3)
            try:
                s.connect(("127.0.0.1", {port}))
                reached = "connected"
            except OSError as exc:
                reached = exc.errno
            routes = open("/proc/net/route").read().splitlines()[1:]
            record(interfaces=sorted(os.listdir("/sys/class/net")), routes=routes,
                   reached=reached, docker_sock=os.path.exists("/var/run/docker.sock"))
            emit()
            """
        )
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    assert run.exit_code == 0, run.stderr
    facts = result(out)
    assert facts["interfaces"] == ["lo"]
    assert facts["routes"] == []
    assert facts["reached"] == errno.ECONNREFUSED
    assert facts["docker_sock"] is False


def test_only_tmp_out_and_shm_are_writable(sandbox: Sandbox) -> None:
    run, out = sandbox.run(
        """
        writable = []
        for top in os.listdir("/"):
            if top in ("proc", "sys"):
                continue
            for dirpath, dirnames, _ in os.walk("/" + top):
                if os.access(dirpath, os.W_OK):
                    writable.append(dirpath)
        attempts = {}
        for d in ("/", "/etc", "/opt/worker", "/opt/venv/lib", "/submission",
                  "/var/tmp", "/root", "/dev"):
            try:
                open(os.path.join(d, "x"), "w").close()
                attempts[d] = 0
            except OSError as exc:
                attempts[d] = exc.errno
        try:
            open("/dev/mqueue/q", "w").close()
            mqueue = 0
        except OSError as exc:
            mqueue = exc.errno
        mounts = {line.split()[1]: line.split()[3] for line in open("/proc/self/mounts")}
        record(writable=writable, attempts=attempts, mounts=mounts, mqueue=mqueue,
               shm=os.statvfs("/dev/shm").f_blocks * os.statvfs("/dev/shm").f_frsize)
        emit()
        """,
        Limits(tmpfs_mb=16, output_mb=32),
    )
    assert run.exit_code == 0, run.stderr
    facts = result(out)
    roots = {p.split("/")[1] for p in facts["writable"]}
    assert roots <= {"tmp", "out", "dev"}, facts["writable"]
    assert {p for p in facts["writable"] if p.startswith("/dev")} <= {"/dev/shm", "/dev/mqueue"}
    assert facts["mqueue"] in (errno.EMFILE, errno.ENOMEM, errno.EACCES), facts["mqueue"]
    assert all(code in (errno.EROFS, errno.EACCES) for code in facts["attempts"].values()), facts
    for mount, size in (("/tmp", "16384k"), ("/out", "32768k")):
        options = facts["mounts"][mount].split(",")
        assert {"noexec", "nosuid", "nodev", f"size={size}"} <= set(options), options
    assert "ro" in facts["mounts"]["/"].split(",")
    assert facts["shm"] <= 8 * MIB


def test_host_files_are_not_visible(sandbox: Sandbox, tmp_path: Path) -> None:
    marker = f"host-secret-{uuid.uuid4().hex}"
    (tmp_path / marker).write_text("secret")
    run, out = sandbox.run(
        f"""
        import importlib.util
        found = []
        for top in os.listdir("/"):
            if top in ("proc", "sys"):
                continue
            for dirpath, dirnames, filenames in os.walk("/" + top):
                for name in dirnames + filenames:
                    if name in ("{marker}", "problems", "courses"):
                        found.append(os.path.join(dirpath, name))
        try:
            open("/etc/shadow").read()
            shadow = "read"
        except OSError as exc:
            shadow = exc.errno
        record(found=found, shadow=shadow, repo=os.path.exists({str(REPO_ROOT)!r}),
               grader=importlib.util.find_spec("grader") is not None)
        emit()
        """
    )
    assert run.exit_code == 0, run.stderr
    facts = result(out)
    assert facts == {"found": [], "shadow": errno.EACCES, "repo": False, "grader": False}


def test_memory_bomb_is_oom_killed(sandbox: Sandbox) -> None:
    run, _ = sandbox.run(
        """
        hoard = []
        while True:
            hoard.append(b"x" * (16 << 20))
        """,
        Limits(memory_mb=256, wall_seconds=60),
    )
    assert run.oom_killed
    assert run.exit_code == 137
    assert not run.timed_out and run.fault is None
    assert run.wall_seconds < 30


def test_fork_bomb_is_capped_by_the_pids_limit(sandbox: Sandbox) -> None:
    run, out = sandbox.run(
        """
        import time
        children, error = 0, None
        for _ in range(1000):
            try:
                if os.fork() == 0:
                    time.sleep(600)
                    os._exit(0)
                children += 1
            except OSError as exc:
                error = exc.errno
                break
        record(children=children, error=error)
        emit()
        """,
        Limits(pids=32, wall_seconds=30),
    )
    assert run.exit_code == 0, run.stderr
    facts = result(out)
    assert facts["error"] == errno.EAGAIN
    assert facts["children"] < 32
    assert run.wall_seconds < 20, "sleeping children must not keep the container alive"


def test_runaway_fork_bomb_times_out(sandbox: Sandbox) -> None:
    run, out = sandbox.run(
        """
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
        Limits(pids=32, wall_seconds=3),
    )
    assert run.timed_out and run.exit_code == 137
    assert run.wall_seconds < 3 + STARTUP_GRACE_SECONDS + 10
    assert list(out.iterdir()) == []


def test_infinite_loop_times_out_and_is_removed(sandbox: Sandbox) -> None:
    run, _ = sandbox.run("while True:\n    pass\n", Limits(wall_seconds=2))
    assert run.timed_out
    assert run.exit_code == 137 and not run.oom_killed and run.fault is None
    assert 2 <= run.wall_seconds < 2 + STARTUP_GRACE_SECONDS + 10


def test_disk_fill_is_capped_everywhere(sandbox: Sandbox) -> None:
    run, out = sandbox.run(
        """
        def fill(directory, file_mb):
            written, index = 0, 0
            try:
                while True:
                    with open(f"{directory}/fill{index}", "wb") as f:
                        for _ in range(file_mb):
                            f.write(b"x" * (1 << 20))
                            written += 1 << 20
                    index += 1
            except OSError as exc:
                return exc.errno, written
            finally:
                for name in os.listdir(directory):
                    if name.startswith("fill"):
                        os.remove(f"{directory}/{name}")
        facts = {d: fill(d, 2) for d in ("/tmp", "/out", "/dev/shm")}
        facts["big"] = fill("/tmp", 64)
        record(**facts)
        emit()
        """,
        Limits(tmpfs_mb=12, output_mb=10, file_size_mb=4),
    )
    assert run.exit_code == 0, run.stderr
    facts = result(out)
    assert facts["/tmp"][0] == errno.ENOSPC and facts["/tmp"][1] <= 12 * MIB
    assert facts["/out"][0] == errno.ENOSPC and facts["/out"][1] <= 10 * MIB
    assert facts["/dev/shm"][0] == errno.ENOSPC and facts["/dev/shm"][1] <= 8 * MIB
    assert facts["big"] == [errno.EFBIG, 4 * MIB]


def test_stdout_flood_is_cut_off(sandbox: Sandbox) -> None:
    run, out = sandbox.run(
        """
        block = b"y" * (1 << 20)
        for _ in range(200):
            os.write(1, block)
        """,
        Limits(output_mb=8),
    )
    assert run.output_error is not None and "stdout exceeded" in run.output_error
    assert run.fault is None
    assert list(out.iterdir()) == []
    assert run.wall_seconds < 30


def test_stderr_flood_is_truncated_and_results_still_arrive(sandbox: Sandbox) -> None:
    run, out = sandbox.run(
        """
        block = b"z" * (1 << 20)
        for _ in range(200):
            os.write(2, block)
        record(done=True)
        emit()
        """,
        Limits(log_bytes=10_000, wall_seconds=60),
    )
    assert (run.exit_code, run.output_error, run.timed_out) == (0, None, False)
    assert run.stderr == "z" * 10_000
    assert result(out) == {"done": True}


def test_unsafe_result_stream_is_rejected(sandbox: Sandbox, tmp_path: Path) -> None:
    run, out = sandbox.run(
        """
        import io
        archive = tarfile.open(fileobj=os.fdopen(1, "wb", closefd=False), mode="w|")
        link = tarfile.TarInfo("escape")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc"
        archive.addfile(link)
        data = tarfile.TarInfo("escape/passwd")
        data.size = 4
        archive.addfile(data, io.BytesIO(b"evil"))
        archive.close()
        """
    )
    assert run.exit_code == 0
    assert run.output_error is not None and "not a regular file" in run.output_error
    assert list(out.iterdir()) == []


def test_pax_header_on_the_result_stream_is_rejected_at_once(sandbox: Sandbox) -> None:
    """CVE-2024-6232: Python's tarfile spends hours on an 8 MiB pax header of digits."""
    run, out = sandbox.run(
        """
        import io
        archive = tarfile.open(fileobj=os.fdopen(1, "wb", closefd=False), mode="w|")
        bomb = tarfile.TarInfo("result.json")
        bomb.type, bomb.size = tarfile.XHDTYPE, 8 << 20
        archive.addfile(bomb, io.BytesIO(b"9" * bomb.size))
        archive.close()
        """
    )
    assert run.exit_code == 0
    assert run.output_error is not None and "not a regular file" in run.output_error
    assert list(out.iterdir()) == []
    assert run.wall_seconds < 20


def test_missing_image_is_a_grader_fault(sandbox_image: str, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    missing = f"attention-grader-missing-{uuid.uuid4().hex[:8]}:none"
    assert unavailable_reason(sandbox_image) is None
    assert "missing" in (unavailable_reason(missing) or "")
    backend = DockerBackend(missing)
    run = backend.run(WorkerJob(tmp_path / "sub", b"", tmp_path / "out", Limits()))
    assert run.exit_code is None
    assert run.fault is not None and "did not start" in run.fault
    assert "image_error" in backend.describe()


def test_sigterm_to_the_host_removes_the_container(sandbox: Sandbox, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "payload.py").write_text("while True:\n    pass\n")
    host = textwrap.dedent(
        f"""
        from pathlib import Path
        from grader.sandboxing.backends.base import Limits, WorkerJob
        from grader.sandboxing.backends.docker import DockerBackend
        root = Path({str(tmp_path)!r})
        backend = DockerBackend({sandbox.image!r}, command={PAYLOAD_COMMAND!r})
        backend.run(WorkerJob(root / "sub", b"", root / "out", Limits(wall_seconds=120)))
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", host], cwd=REPO_ROOT)
    try:
        deadline = time.monotonic() + 30
        while not sandbox_containers():
            assert time.monotonic() < deadline, "container never appeared"
            assert proc.poll() is None, "host exited early"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
    assert sandbox_containers() == []


def real_worker_job(root: Path, entry_source: str, limits: Limits) -> WorkerJob:
    """A one-problem job for the real worker whose entry file is `entry_source`."""
    sub_dir = root / "submission"
    sub_dir.mkdir()
    (sub_dir / "p.py").write_text(entry_source)
    problem: ProblemJob = {"entry": "p.py", "probes": [], "refuse": [], "key": "00" * 32}
    job = encode_job(
        [problem_part("p", 3, problem, {"unused": torch.zeros(1)})], {"p": ["p.py"]}, "job"
    )
    return WorkerJob(sub_dir, job, root / "out", limits, result_names(["p"]))


def test_real_worker_reports_a_hung_problem(sandbox_image: str, tmp_path: Path) -> None:
    job = real_worker_job(tmp_path, "print('hello', flush=True)\nwhile True:\n    pass\n", Limits())
    run = DockerBackend(sandbox_image).run(job)
    assert (run.exit_code, run.fault, run.output_error) == (0, None, None), run.stderr
    report = json.loads((job.out_dir / "worker.json").read_text())
    assert report["torch"].startswith("2.13.0")
    assert (job.out_dir / "p" / "started").is_file()
    assert json.loads((job.out_dir / "p" / "exit.json").read_text())["timed_out"] is True
    assert (job.out_dir / "p" / "stdout.txt").read_text() == "hello\n"


def test_real_worker_contains_200_mb_of_printing(sandbox_image: str, tmp_path: Path) -> None:
    source = "import sys\nfor _ in range(200):\n    sys.stdout.write('p' * (1 << 20))\n"
    job = real_worker_job(tmp_path, source, Limits(file_size_mb=8))
    run = DockerBackend(sandbox_image).run(job)
    assert (run.exit_code, run.fault, run.output_error) == (0, None, None), run.stderr
    assert (job.out_dir / "p" / "stdout.txt").stat().st_size <= 8 * MIB
    status = json.loads((job.out_dir / "p" / "import.json").read_text().partition("\n")[2])
    assert "File too large" in json.dumps(status["import_error"])


def test_sandbox_clean_removes_leftover_containers(sandbox_image: str) -> None:
    leftover = client().containers.create(sandbox_image, labels={LABEL: "1"}).id
    assert leftover in sandbox_containers()
    result = CliRunner().invoke(sandbox_group, ["clean"])
    assert result.exit_code == 0, result.output
    assert "removed 1 container(s)" in result.output
    assert sandbox_containers() == []
