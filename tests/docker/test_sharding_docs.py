"""The sharding guide's GitHub Actions workflow and Kubernetes Job, run the way their scheduler
runs them: the workflow linted by actionlint, then each matrix shard's and the merge's grader
steps in a checkout of a class; the Job's command in each indexed pod, on a volume at /class.
Both gradebooks equal one unsharded run with the same seed and secret."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from grader.sandboxing.defaults import DEFAULT_TAG
from grader.secret import ENV_SECRET
from tests.docker.engine import IMAGE
from tests.workflows import actionlint

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "sharding.md"
SETUP_STEPS = {"Install the grader", "Build the sandbox image"}  # done once, for every shard
SECRET = "the class's grading secret"  # the repository's, or the cluster's, secret

pytestmark = pytest.mark.docker


def texts() -> list[str]:
    """The guide's YAML blocks, as written: the workflow, then the Job."""
    return re.findall(r"```yaml\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)


def blocks() -> list[dict[Any, Any]]:
    return [yaml.safe_load(text) for text in texts()]


def shell(script: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(
        ["sh", "-c", script],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"


def class_folder(root: Path) -> Path:
    """A class: the shipped examples, and one more copy of the complete one."""
    submissions = root / "submissions"
    shutil.copytree(ROOT / "submissions", submissions)
    shutil.copytree(submissions / "complete", submissions / "complete_again")
    return submissions


def gradebook(folder: Path) -> list[str]:
    return (folder / "summary.csv").read_text().splitlines()


def test_the_workflow_passes_actionlint(tmp_path: Path) -> None:
    path = tmp_path / "grade-class.yml"
    path.write_text(texts()[0])
    assert actionlint(path) == []


def run_steps(job: dict[str, Any], checkout: Path, matrix: dict[str, Any]) -> None:
    """A job's own steps, `${{ matrix.* }}` and `${{ secrets.* }}` filled in; set-up and
    artifact steps are left to the test, which installed the grader and built the image once."""
    for step in job["steps"]:
        if "run" not in step or step.get("name") in SETUP_STEPS:
            continue
        script = re.sub(
            r"\$\{\{\s*matrix\.(\w+)\s*\}\}", lambda m: str(matrix[m.group(1)]), step["run"]
        )
        env = {
            name: re.sub(r"\$\{\{\s*secrets\.\w+\s*\}\}", SECRET, value)
            for name, value in step.get("env", {}).items()
        }
        shell(script, checkout, env)


def test_the_workflow_shards_and_merges_into_one_gradebook(
    tmp_path: Path, sandbox_image: str
) -> None:
    if IMAGE != DEFAULT_TAG:
        pytest.skip("the guide's commands grade with the default image")
    workflow = blocks()[0]
    shard, merge = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    assert merge["needs"] == "shard"
    upload = next(s for s in shard["steps"] if s.get("uses", "").startswith("actions/upload"))
    download = next(s for s in merge["steps"] if s.get("uses", "").startswith("actions/down"))
    checkout = tmp_path / "checkout"
    class_folder(checkout)
    seed = re.search(r"--seed (\d+)", str(shard["steps"])).group(1)  # type: ignore[union-attr]
    for value in shard["strategy"]["matrix"]["shard"]:
        runner = tmp_path / f"runner{value}"
        shutil.copytree(checkout, runner)
        run_steps(shard, runner, {"shard": value})
        artifact = upload["with"]["name"].replace("${{ matrix.shard }}", str(value))
        shutil.copytree(
            runner / upload["with"]["path"], checkout / download["with"]["path"] / artifact
        )
    run_steps(merge, checkout, {})
    shell(f"grader grade submissions/ --seed {seed} --out whole", checkout, {ENV_SECRET: SECRET})
    merged = checkout / "merged"
    assert gradebook(merged) == gradebook(checkout / "whole")
    assert (merged / "report.html").is_file()
    assert len(gradebook(merged)) == 1 + 4 + 1  # header, 4 submissions, points possible


def test_the_indexed_job_shards_and_merges_into_one_gradebook(
    tmp_path: Path, sandbox_image: str
) -> None:
    if IMAGE != DEFAULT_TAG:
        pytest.skip("the guide's commands grade with the default image")
    job = blocks()[1]
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
    (pod,) = job["spec"]["template"]["spec"]["containers"]
    (mount,) = pod["volumeMounts"]
    volume = tmp_path / "volume"
    class_folder(volume)

    def on_volume(text: str) -> str:
        return text.replace(mount["mountPath"], str(volume))

    (script,) = pod["args"]
    assert pod["command"] == ["sh", "-c"]
    assert [e["name"] for e in pod["env"]] == [ENV_SECRET]  # from the cluster's secret
    for index in range(job["spec"]["completions"]):
        shell(on_volume(script), tmp_path, {"JOB_COMPLETION_INDEX": str(index), ENV_SECRET: SECRET})
    # a pod started again by the Job (the same index) resumes its shard
    shell(on_volume(script), tmp_path, {"JOB_COMPLETION_INDEX": "0", ENV_SECRET: SECRET})
    merge = re.search(r"Then: `(grader report [^`]*)`", GUIDE.read_text())
    assert merge is not None
    shell(on_volume(merge.group(1)), tmp_path)
    seed = re.search(r"--seed (\d+)", script).group(1)  # type: ignore[union-attr]
    shell(f"grader grade submissions --seed {seed} --out whole", volume, {ENV_SECRET: SECRET})
    assert gradebook(volume / "gradebook") == gradebook(volume / "whole")
