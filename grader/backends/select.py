"""Choosing a backend by name: docker, local, or auto (docker where an engine answers)."""

from __future__ import annotations

from collections.abc import Callable

from grader.backends.base import Backend
from grader.backends.local import LocalBackend


class BackendUnavailable(Exception):
    """The asked-for backend cannot run here."""


def make_backend(name: str, warn: Callable[[str], None], image: str | None = None) -> Backend:
    """The backend called `name`; `auto` warns loudly when it falls back to local."""
    if name == "local":
        return LocalBackend()
    from grader.backends import docker

    reason = docker.unavailable_reason(image)
    if reason is None:
        return docker.DockerBackend(image)
    if name == "docker":
        raise BackendUnavailable(f"the docker backend cannot run: {reason}")
    warn(
        f"WARNING: falling back to the LOCAL backend ({reason}). The local backend is not a "
        "security boundary: submission code runs as you. Use --backend docker for untrusted code."
    )
    return LocalBackend()
