"""Gradescope, emulated end to end: the autograder zip's `setup.sh` and `run_autograder` in a
container laid out as Gradescope's (`/autograder/source` holding the unpacked zip,
`/autograder/submission`, `/autograder/results`), from the air-gapped base image with the
network off, so `setup.sh` installs from a mounted wheelhouse. The image is built once per
session (committed after `setup.sh`); each submission runs in a fresh container of it,
as root, under Docker's default capabilities (no CAP_SYS_RESOURCE), as on Gradescope."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tarfile
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import pytest
from docker.models.containers import Container
from docker.types import Mount

from grader.courses.catalog import Catalog
from grader.platforms.gradescope.autograder import build_autograder, requirements
from grader.sandboxing.defaults import DEFAULT_BASE
from grader.sandboxing.engine import LABEL, remove_containers
from grader.sandboxing.image import download_wheelhouse, image_exists
from tests import whole
from tests.conftest import ROOT
from tests.gradescope_format import validate_gradescope
from tests.test_local_backend import OUT_FOLDER_ATTACK
from tests.test_notebooks import notebook

pytestmark = pytest.mark.docker

WHEELHOUSE = ROOT / ".cache" / "gradescope" / "wheelhouse"
STUDENT = "grader-student"
FULL_MARKS = whole.full_marks(Catalog())
LABELS = {LABEL: "gradescope-test"}
SLOW_SECONDS = 900
"""Time allowed for `setup.sh` or one run of the autograder."""
# Run as Gradescope does, then count what the candidate's account left running.
RUN = f"""\
/autograder/run_autograder
status=$?
left=0
for p in /proc/[0-9]*; do [ "$(stat -c %U "$p" 2>/dev/null)" = {STUDENT} ] && left=$((left+1)); done
echo "LEFT BY {STUDENT}: $left" >&2
exit $status
"""


@dataclass
class Run:
    exit_code: int
    results: dict[str, Any]
    report: dict[str, Any]  # the instructor's full report, beside results.json
    stdout: str  # what Gradescope shows instructors: the summary
    stderr: str


def unpack(archive: Path, dest: Path) -> None:
    """As `unzip` does: the files and their modes."""
    with zipfile.ZipFile(archive) as zipped:
        for info in zipped.infolist():
            Path(zipped.extract(info, dest)).chmod(info.external_attr >> 16 & 0o777)


def engine() -> docker.DockerClient:
    """A client that waits as long as `setup.sh` and the autograder may take."""
    return docker.from_env(timeout=SLOW_SECONDS)


def packed(folder: Path, name: str) -> bytes:
    """`folder` as a tar stream, under `name` (`.`: its contents), owned by root."""

    def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        archive.add(folder, arcname=name, filter=as_root)
    return data.getvalue()


def copied_out(container: Container, path: str) -> bytes:
    """The content of one file of a container, as `docker cp` would fetch it."""
    chunks, _ = container.get_archive(path)
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as archive:
        member = archive.next()
        assert member is not None and member.isfile(), path
        handle = archive.extractfile(member)
        assert handle is not None
        return handle.read()


def logged(container: Container, stdout: bool) -> str:
    """What the container wrote on its stdout, or on its stderr."""
    out = container.logs(stdout=stdout, stderr=not stdout)
    assert isinstance(out, bytes)
    return out.decode(errors="replace")


def base_python(client: docker.DockerClient, base: str) -> str:
    code = "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"
    out = client.containers.run(base, ["python3", "-c", code], remove=True, network_mode="none")
    assert isinstance(out, bytes)
    return out.decode().strip()


@pytest.fixture(scope="session")
def gradescope_image(
    docker_engine: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The base image after `setup.sh`, committed; removed at the end of the session."""
    if not image_exists(DEFAULT_BASE):
        pytest.fail(f"base image {DEFAULT_BASE} missing: run scripts/ci-docker.sh")
    client = engine()
    download_wheelhouse(
        WHEELHOUSE, packages=requirements(), python_version=base_python(client, DEFAULT_BASE)
    )
    tmp = tmp_path_factory.mktemp("gradescope")
    layout = tmp / "autograder"
    for folder in ("source", "submission", "results"):
        (layout / folder).mkdir(parents=True)
    for path in (layout, *layout.iterdir()):
        path.chmod(0o755)
    unpack(build_autograder(tmp / "autograder.zip"), layout / "source")
    shutil.copy2(layout / "source" / "run_autograder", layout / "run_autograder")
    run_id = uuid.uuid4().hex[:12]
    name, repository = f"grader-gradescope-setup-{run_id}", "grader-gradescope-test"
    wheels = Mount("/autograder/source/wheelhouse", str(WHEELHOUSE), "bind", read_only=True)
    container = client.containers.create(
        DEFAULT_BASE, ["sleep", "infinity"], name=name, labels=LABELS, network_mode="none",
        mounts=[wheels], working_dir="/autograder/source",
    )  # fmt: skip
    try:
        assert container.put_archive("/", packed(layout, "autograder"))
        container.start()
        code, output = container.exec_run(["bash", "./setup.sh"])
        assert code == 0, str(output)[-4000:]
        container.stop(timeout=0)
        container.commit(repository, run_id, changes=["CMD []"])
    finally:
        remove_containers([name])
    yield f"{repository}:{run_id}"
    with contextlib.suppress(docker.errors.DockerException):
        client.images.remove(f"{repository}:{run_id}", force=True)


def run_autograder(image: str, upload: Path, results: Path) -> Run:
    """A fresh container of the image with `upload` as the submission; what Gradescope keeps."""
    name = f"grader-gradescope-run-{uuid.uuid4().hex[:12]}"
    container = engine().containers.create(
        image, ["bash", "-c", RUN], name=name, labels=LABELS, network_mode="none",
        working_dir="/autograder",
    )  # fmt: skip
    try:
        assert container.put_archive("/autograder/submission", packed(upload, "."))
        container.start()
        exit_code = container.wait(timeout=SLOW_SECONDS)["StatusCode"]
        stdout, stderr = logged(container, stdout=True), logged(container, stdout=False)
        try:
            results.write_bytes(copied_out(container, "/autograder/results/results.json"))
            report = json.loads(copied_out(container, "/autograder/results/report.json"))
        except docker.errors.NotFound:
            pytest.fail(f"no results.json (exit {exit_code}): {stderr[-3000:]}")
    finally:
        remove_containers([name])
    assert stdout.startswith(f"score {report['total']:g}/") and "report.json" in stdout
    return Run(exit_code, json.loads(results.read_text()), report, stdout, stderr)


def hidden_checks(report: dict[str, Any]) -> set[str]:
    return {
        f"{p['problem']}: {c['name']}"
        for p in report["problems"]
        for c in p["checks"]
        if c["visibility"] == "hidden"
    }


def assert_well_formed(run: Run) -> None:
    """Graded without a fault, in Gradescope's format, the account's processes all gone."""
    assert run.exit_code == 0, run.stderr
    validate_gradescope(run.results)
    tests = run.results["tests"]
    assert run.results["score"] == pytest.approx(sum(t["score"] for t in tests))
    assert sum(t["max_score"] for t in tests) == FULL_MARKS
    hidden = {t["name"] for t in tests if t["visibility"] == "hidden"}
    assert hidden == hidden_checks(run.report)  # by name, for instructors; Gradescope hides them
    assert run.report["run"]["environment"]["runs_as"] == f"{STUDENT} (rlimits)"
    assert f"LEFT BY {STUDENT}: 0" in run.stderr


@pytest.mark.timeout(1800)
def test_complete_submission_scores_full_marks(gradescope_image: str, tmp_path: Path) -> None:
    run = run_autograder(gradescope_image, ROOT / "submissions" / "complete", tmp_path / "r.json")
    assert_well_formed(run)
    assert run.results["score"] == FULL_MARKS
    assert all(t["status"] == "passed" for t in run.results["tests"])
    assert hidden_checks(run.report)


@pytest.mark.timeout(900)
def test_wrong_submission_in_a_folder_names_its_mistakes(
    gradescope_image: str, tmp_path: Path
) -> None:
    """Uploaded inside a folder, as a candidate zipping their folder would."""
    mistakes = ROOT / "submissions" / "classic_mistakes"
    shutil.copytree(mistakes, tmp_path / "upload" / "attention")
    run = run_autograder(gradescope_image, tmp_path / "upload", tmp_path / "r.json")
    assert_well_formed(run)
    assert "graded the problem files in the folder attention/" in run.results["output"]
    attempted = {p["problem"] for p in run.report["problems"] if p["status"] != "not_attempted"}
    assert attempted == {f.stem for f in mistakes.glob("*.py")}
    assert 0 < run.results["score"] < FULL_MARKS
    named = [t for t in run.results["tests"] if "named mistake" in t["output"]]
    assert any(t["visibility"] == "visible" and t["status"] == "failed" for t in named)


@pytest.mark.timeout(900)
def test_hostile_submission_gains_nothing(gradescope_image: str, tmp_path: Path) -> None:
    """It cannot write the results, read the checks or the reference, nor outlive the run."""
    hostile = ROOT / "tests" / "hostile" / "forges_results"
    run = run_autograder(gradescope_image, hostile, tmp_path / "r.json")
    assert_well_formed(run)
    assert "FORGED" not in json.dumps(run.results)
    problem = next(p for p in run.report["problems"] if p["problem"] == "causal_self_attention")
    line = next(x for x in problem["stdout"].splitlines() if x.startswith("ATTEMPTS "))
    assert set(json.loads(line.removeprefix("ATTEMPTS ")).values()) == {"PermissionError"}
    assert run.results["score"] == problem["score"] < problem["max_score"]


@pytest.mark.timeout(900)
def test_what_the_candidate_leaves_in_its_out_folder_gains_nothing(
    gradescope_image: str, tmp_path: Path
) -> None:
    """The candidate's account replaces its problem's stdout with a FIFO (which would hold
    the root grader for ever), its stderr with a link to the reference solution (which only
    root reads), and the worker's `worker.json` with another protocol (a grader error, no
    score): results.json is written, full marks, and the reference's text is nowhere. Any
    step of the attack that failed would fail the import, and the full marks."""
    upload = tmp_path / "upload"
    upload.mkdir()
    reference = "/autograder/source/grader/reference_solutions/split_heads.py"
    attack = OUT_FOLDER_ATTACK.format(secret=reference, mark="/tmp/attacked")
    split_heads = (ROOT / "submissions" / "complete" / "split_heads.py").read_text()
    (upload / "split_heads.py").write_text(attack + split_heads)
    run = run_autograder(gradescope_image, upload, tmp_path / "r.json")
    assert_well_formed(run)
    problem = next(p for p in run.report["problems"] if p["problem"] == "split_heads")
    assert problem["score"] == problem["max_score"] == run.results["score"], problem["message"]
    secret = (ROOT / "reference_solutions" / "split_heads.py").read_text().splitlines()[0]
    assert secret not in json.dumps(run.report) and secret not in json.dumps(run.results)


@pytest.mark.timeout(900)
def test_a_notebook_upload_is_graded_as_the_file_it_stands_for(
    gradescope_image: str, tmp_path: Path
) -> None:
    """self_attention.ipynb, as Jupyter saves it, beside a .py file: both graded, full marks."""
    upload = tmp_path / "upload"
    upload.mkdir()
    code = (ROOT / "submissions" / "complete" / "self_attention.py").read_text()
    cells = (("markdown", "# Self-attention"), ("code", "%matplotlib inline\n" + code))
    (upload / "self_attention.ipynb").write_text(notebook(*cells))
    shutil.copyfile(ROOT / "submissions" / "complete" / "split_heads.py", upload / "split_heads.py")
    run = run_autograder(gradescope_image, upload, tmp_path / "r.json")
    assert_well_formed(run)
    graded = {p["problem"]: p for p in run.report["problems"] if p["status"] != "not_attempted"}
    assert set(graded) == {"self_attention", "split_heads"}
    assert all(p["score"] == p["max_score"] for p in graded.values()), graded
    assert "self_attention.ipynb" in json.dumps(run.report)
