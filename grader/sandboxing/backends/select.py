"""Choosing a backend by name: docker (the sandbox) or local (knowingly unsandboxed)."""

from __future__ import annotations

from grader.errors import GraderError
from grader.sandboxing.backends.base import Backend, BackendName, Isolation, Limits
from grader.sandboxing.backends.local import LocalBackend

UNSANDBOXED = (
    "To run the submissions' code on this machine without a sandbox, as you, pass --backend "
    "local: only for code you trust."
)


class BackendUnavailable(GraderError):
    """The asked-for backend cannot run here."""


def make_backend(
    name: BackendName,
    image: str | None = None,
    isolation: Isolation = Isolation.warm,
    ready: Limits | None = None,
    workers: int = 1,
) -> Backend:
    """The backend called `name`; never a silent fall back from the sandbox to local. Docker
    keeps submissions apart in warm workers' containers or in a `container` each. Given
    `ready` limits, workers for jobs with these limits start at once: the local backend's
    first, or `workers` warm containers. The fork backend forks its first worker at once."""
    if name is BackendName.local:
        return LocalBackend(ready=ready)
    if name is BackendName.fork:
        from grader.sandboxing.backends.fork import ForkBackend

        return ForkBackend()
    from grader.sandboxing.backends import docker, warm

    reason = docker.unavailable_reason(image)
    if reason is not None:
        raise BackendUnavailable(f"the docker sandbox cannot run: {reason}. {UNSANDBOXED}")
    if isolation is Isolation.warm:
        return warm.WarmBackend(image, ready=ready, workers=workers)
    return docker.DockerBackend(image)
