"""Thin wrappers over the `docker` command-line client (no SDK dependency)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence

from grader.errors import GraderError

LABEL = "attention-grader"
"""Every container the grader starts carries the label `attention-grader=1`."""


class DockerError(GraderError):
    """The docker client is missing or a docker command failed."""


def docker_binary() -> str:
    """The docker client to use: `$GRADER_DOCKER` if set, else `docker` on the PATH."""
    name = os.environ.get("GRADER_DOCKER", "docker")
    found = shutil.which(name)
    if found is None:
        raise DockerError(f"docker client {name!r} not found")
    return found


def docker(args: Sequence[str], timeout: float = 60.0, check: bool = True) -> str:
    """Run one short docker command and return its stdout (raise `DockerError` on failure)."""
    argv = [docker_binary(), *args]
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as exc:
        raise DockerError(f"`docker {' '.join(args)}` timed out after {timeout}s") from exc
    if check and proc.returncode != 0:
        raise DockerError(f"`docker {' '.join(args)}` failed: {proc.stderr.strip()}")
    return proc.stdout


def engine_reachable(timeout: float = 10.0) -> bool:
    """True when a docker client is installed and its engine answers."""
    try:
        docker(["version", "--format", "{{.Server.Version}}"], timeout=timeout)
    except DockerError:
        return False
    return True


def remove_containers(names: Sequence[str]) -> None:
    """Force-remove containers by name or id, ignoring ones already gone."""
    if names:
        docker(["rm", "--force", *names], check=False)


def grader_containers() -> list[str]:
    """Ids of every container, running or not, that carries the grader's label."""
    out = docker(["ps", "--all", "--quiet", "--no-trunc", "--filter", f"label={LABEL}"])
    return out.split()
