"""GitHub Classroom: the workflow that grades a candidate's repository on every push.

What it cannot protect: the candidate owns the repository and its workflow. They can edit the
workflow, skip the grader, print any value, or read anything the job can read, including the
grader's hidden checks and reference solutions (the job installs them). Treat Classroom scores
as feedback, and grade for credit where candidates do not control the runner (`grader grade`
with the docker backend, or Gradescope).
"""

from __future__ import annotations

import shlex
from pathlib import Path

WORKFLOW_PATH = Path(".github/workflows/classroom.yml")
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"

WORKFLOW = """\
# Grades this repository on every push and reports the score to GitHub Classroom.
# The repository's owner can edit this file: see the grader's docs/classroom.md.
name: Autograding Tests
on: [push, workflow_dispatch, repository_dispatch]
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    timeout-minutes: {timeout}
    steps:
      - name: Check out the submission
        uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "{python}"
      - name: Install the grader
        run: |
          python -m pip install --quiet torch --index-url {torch_index}
          git clone --quiet --depth 1 {branch}{grader_url} "$RUNNER_TEMP/grader"
          python -m pip install --quiet -e "$RUNNER_TEMP/grader"
      - name: Grade
        id: grader
        run: grader grade . --backend local --format github-classroom --out "$RUNNER_TEMP/reports"
      - name: Report to GitHub Classroom
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
          GRADER_RESULTS: "${{{{ steps.grader.outputs.result }}}}"
        with:
          runners: grader
"""


def workflow(
    grader_url: str, ref: str | None = None, python: str = "3.11", timeout: int = 20
) -> str:
    """The workflow text: install torch (CPU) and the grader from `grader_url`, grade, report."""
    branch = f"--branch {shlex.quote(ref)} " if ref else ""
    return WORKFLOW.format(
        grader_url=shlex.quote(grader_url),
        branch=branch,
        python=python,
        timeout=timeout,
        torch_index=TORCH_INDEX,
    )


def write_workflow(repo: Path, text: str, force: bool = False) -> Path:
    path = repo / WORKFLOW_PATH
    if path.exists() and not force:
        raise FileExistsError(f"{path} exists (use --force to replace it)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
