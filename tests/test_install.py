"""The README's install, run as written in a fresh virtualenv with no torch: torch's CPU build
first, from a local copy of PyTorch's CPU index (that index is out of this machine's reach),
then the grader's and the course's wheels, which keep it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, clean_env, sh

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def readme_install() -> list[str]:
    """The lines of the README's install block, from the virtualenv to `grader problems`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks: list[str] = re.findall(r"```bash\n(.*?)```", readme, re.S)
    (block,) = [b for b in blocks if "pip install torch" in b]
    return block.strip().splitlines()


def cpu_index(folder: Path, env: dict[str, str]) -> str:
    """A PEP 503 index holding torch's CPU build and its dependencies, as PyTorch's does: the
    build this machine's pip finds for `torch==2.13.0`, fetched with pip's own configuration."""
    wheels = folder / "wheels"
    wheels.mkdir(parents=True)
    sh([sys.executable, "-m", "pip", "download", "-q", "--only-binary", ":all:", "-d",
        str(wheels), "torch==2.13.0"], folder, env)  # fmt: skip
    if not any("+cpu" in w.name for w in wheels.glob("torch-*.whl")):
        pytest.skip("no CPU build of torch 2.13.0 within pip's reach here")
    for wheel in wheels.glob("*.whl"):
        project = folder / "simple" / re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
        project.mkdir(parents=True, exist_ok=True)
        (project / wheel.name).symlink_to(wheel)
        page = project / "index.html"
        links = page.read_text() if page.exists() else ""
        page.write_text(f'{links}<a href="{wheel.name}">{wheel.name}</a>\n')
    return (folder / "simple").as_uri()


def test_the_readme_install_gives_torch_cpu_and_a_working_grader(
    tmp_path: Path, wheel: Path, course_wheel: Path
) -> None:
    env = clean_env()
    index = cpu_index(tmp_path / "cpu", env)
    venv = tmp_path / "attention-grader"
    env["PIP_CONFIG_FILE"] = "/dev/null"  # no local wheels: torch from the index or from PyPI
    env.pop("PIP_FIND_LINKS", None)
    lines = readme_install()
    assert lines[0].startswith("python3 -m venv ~/attention-grader")
    assert lines[-1].startswith("grader problems && grader sandbox build")
    script = "\n".join([*lines[:-1], "grader problems --json > problems.json"])
    script = script.replace("~/attention-grader", str(venv)).replace(CPU_INDEX, index)
    script = script.replace(wheel.name, str(wheel)).replace(course_wheel.name, str(course_wheel))
    sh(["bash", "-euo", "pipefail", "-c", script], tmp_path, env)
    listing = json.loads((tmp_path / "problems.json").read_text())
    assert len(listing) == 11, listing  # `grader problems`: every problem of the catalog
    python = str(venv / "bin" / "python")
    version = sh([python, "-c", "import torch; print(torch.__version__)"], tmp_path, env)
    assert version.strip() == "2.13.0+cpu"
    listed = sh([python, "-m", "pip", "list", "--format", "freeze"], tmp_path, env)
    assert not [line for line in listed.splitlines() if line.lower().startswith("nvidia")]
