"""GitHub Classroom: the workflow that gives a candidate feedback on every push.

It runs the visible checks from the candidate kit (`grader release`) committed in the template
at `.grader/kit`: the course's hidden checks and its reference solutions are not in the job.
The candidate owns the repository and its workflow: they can edit it, skip the grader or print
any value. Treat Classroom scores as feedback; grade for credit with the full course where
candidates do not control the runner (`grader grade --course DIR` over the class's cloned
repositories, with the docker backend, or Gradescope).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from grader.errors import GraderError

WORKFLOW_PATH = Path(".github/workflows/classroom.yml")
TORCH = "torch==2.13.0"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
KIT = ".grader/kit"
HEADER = f"""\
# Candidate feedback on every push: the visible checks of the kit in {KIT} (no hidden
# checks, no reference solutions), reported to GitHub Classroom. Not a grade for credit: the
# repository's owner can edit this file. The instructor grades for credit with the full course,
# on their own machine: `gh classroom clone student-repos`, then
# `grader grade student-repos --course COURSE_DIR --format csv` (see docs/classroom.md).
"""
INSTALL = f"""\
python -m pip install --quiet "{TORCH}" --index-url {TORCH_INDEX}
git clone --quiet --depth 1 ${{GRADER_REF:+--branch "$GRADER_REF"}} "$GRADER_URL" \\
    "$RUNNER_TEMP/grader"
python -m pip install --quiet -e "$RUNNER_TEMP/grader"
"""
GRADE = (
    f"grader grade . --course {KIT} --backend local --format github-classroom "
    '--out "$RUNNER_TEMP/reports"'
)


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks, the way workflow scripts are written by hand."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def workflow_data(
    grader_url: str, ref: str | None = None, python: str = "3.11", timeout: int = 20
) -> dict[str, Any]:
    """The workflow as data: the URL and ref reach the shell as environment variables only."""
    return {
        "name": "Autograding Tests",
        "on": {"push": None, "workflow_dispatch": None, "repository_dispatch": None},
        "permissions": {"checks": "write", "actions": "read", "contents": "read"},
        "jobs": {
            "run-autograding-tests": {
                "runs-on": "ubuntu-latest",
                "if": "github.actor != 'github-classroom[bot]'",
                "timeout-minutes": timeout,
                "env": {"GRADER_URL": grader_url, "GRADER_REF": ref or ""},
                "steps": [
                    {"name": "Check out the submission", "uses": "actions/checkout@v4"},
                    {"uses": "actions/setup-python@v5", "with": {"python-version": python}},
                    {
                        "name": "Cache pip downloads",
                        "uses": "actions/cache@v4",
                        "with": {
                            "path": "~/.cache/pip",
                            "key": f"pip-${{{{ runner.os }}}}-py{python}-{TORCH}",
                        },
                    },
                    {"name": "Install the grader", "run": INSTALL},
                    {"name": "Grade", "id": "grader", "run": GRADE},
                    {  # also after a grader fault: the result says what failed
                        "name": "Report to GitHub Classroom",
                        "if": "always()",
                        "uses": "classroom-resources/autograding-grading-reporter@v1",
                        "env": {"GRADER_RESULTS": "${{ steps.grader.outputs.result }}"},
                        "with": {"runners": "grader"},
                    },
                ],
            }
        },
    }


def workflow(
    grader_url: str, ref: str | None = None, python: str = "3.11", timeout: int = 20
) -> str:
    """The workflow file: install torch (CPU) and the grader from `grader_url`, run the kit's
    visible checks, report."""
    data = workflow_data(grader_url, ref, python, timeout)
    return HEADER + str(yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=100))


def write_workflow(repo: Path, text: str, force: bool = False) -> Path:
    """Write the workflow file into the repository `repo` (a clone of the template)."""
    if not repo.is_dir():
        raise GraderError(
            f"{repo} is not a folder: give the assignment's template repository (a clone)"
        )
    path = repo / WORKFLOW_PATH
    if path.exists() and not force:
        raise GraderError(f"{path} exists (use --force to replace it)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
