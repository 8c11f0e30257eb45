"""The Docker engine, through the `docker` SDK: the process's clients, and its errors as ours."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Sequence

import docker
import requests
from docker.errors import APIError, DockerException, NotFound

from grader.errors import GraderError

LABEL = "attention-grader"
"""Every container the grader starts carries the label `attention-grader=1`."""
RUN_LABEL = "attention-grader.run"
"""And this one, the run id of the backend that made it (`cleanup.Run`)."""
CONNECT_SECONDS = 5
"""Time allowed for a first answer from the engine (its API version)."""
API_SECONDS = 60
"""Time allowed for the engine's answer to any later request but a build or a wait."""
_ENVIRONMENT = ("DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH")

_clients: dict[tuple[str | None, ...], docker.DockerClient] = {}
_lock = threading.Lock()


class DockerError(GraderError):
    """No docker engine answers, or it refused or failed a request."""


class Missing(DockerError):
    """The engine has no such container or image."""


def reason(exc: Exception) -> str:
    """One line on why the SDK or the engine failed."""
    text = exc.explanation if isinstance(exc, APIError) and exc.explanation else str(exc)
    return (text.strip().splitlines() or [type(exc).__name__])[0]


@contextlib.contextmanager
def engine_errors(what: str) -> Iterator[None]:
    """Raise any failure of the SDK or the engine as `DockerError` (`Missing` for a 404)."""
    try:
        yield
    except NotFound as exc:
        raise Missing(f"{what}: {reason(exc)}") from exc
    except (DockerException, requests.RequestException) as exc:
        raise DockerError(f"{what}: {reason(exc)}") from exc


def client() -> docker.DockerClient:
    """A client of the engine that DOCKER_HOST names (else the default socket), one per
    process and setting; `DockerError` when no engine answers."""
    key = tuple(os.environ.get(name) for name in _ENVIRONMENT)
    with _lock:
        found = _clients.get(key)
        if found is None:
            where = key[0] or "the default socket"
            with engine_errors(f"no docker engine answers at {where}"):
                found = docker.from_env(timeout=CONNECT_SECONDS)
            found.api.timeout = API_SECONDS
            _clients[key] = found
        return found


def engine_reachable() -> bool:
    """True when an engine answers."""
    try:
        with engine_errors("ping"):
            client().ping()
    except DockerError:
        return False
    return True


def remove_containers(names: Sequence[str]) -> None:
    """Force-remove containers by name or id, ignoring ones already gone (or going)."""
    for name in names:
        with contextlib.suppress(DockerError), engine_errors(f"cannot remove {name}"):
            client().api.remove_container(name, force=True)


def grader_containers() -> list[str]:
    """Ids of every container, running or not, that carries the grader's label."""
    return labelled_containers(LABEL)


def labelled_containers(label: str, value: str | None = None) -> list[str]:
    """Ids of every container, running or not, that carries `label` (with `value`, if given)."""
    wanted = label if value is None else f"{label}={value}"
    with engine_errors("cannot list containers"):
        found = client().containers.list(all=True, filters={"label": wanted}, sparse=True)
    return [str(c.id) for c in found]
