"""Building the sandbox image: base rootfs, wheelhouse, build context, image facts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from docker.utils import parse_repository_tag

from grader.errors import GraderError
from grader.sandboxing.defaults import (
    CACHE_DIR,
    DEFAULT_BASE,
    DEFAULT_TAG,
    PYTHON_VERSION,
    TORCH_VERSION,
)
from grader.sandboxing.engine import DockerError, Missing, client, engine_errors
from grader.sandboxing.paths import DOCKERFILE, SANDBOX_DIR, worker_files, worker_sha256

EXTRA_PACKAGES = ("safetensors", "numpy")
"""Installed beside torch; numpy because `safetensors.torch.save_file` needs it."""
WHEEL_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
LABEL_TORCH = "attention-grader.torch-version"
LABEL_WORKER = "attention-grader.sandbox.executor-sha256"
_ROOTFS_TRIM = ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man")
_IMPORT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

OnLine = Callable[[str], None]


class ImageError(GraderError):
    """An image could not be built, imported or inspected."""


@dataclass(frozen=True)
class ImageFacts:
    """What a report records about the sandbox image."""

    image_id: str
    torch_version: str
    worker_sha256: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def _ignore(_line: str) -> None:
    return None


def _stream(argv: Sequence[str], on_line: OnLine, what: str) -> None:
    """Run a long command, passing each output line to `on_line`; raise on failure."""
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
    )
    assert proc.stdout is not None
    tail: list[str] = []
    for line in proc.stdout:
        line = line.rstrip("\n")
        on_line(line)
        tail = [*tail[-19:], line]
    if proc.wait() != 0:
        raise ImageError(f"{what} failed (exit {proc.returncode}):\n" + "\n".join(tail))


def image_facts(tag: str) -> ImageFacts:
    """Id and labels of a built sandbox image (raise `ImageError` if it is missing)."""
    try:
        with engine_errors(f"sandbox image {tag!r} not available"):
            found = client().images.get(tag)
    except DockerError as exc:
        raise ImageError(str(exc)) from exc
    labels = found.labels
    return ImageFacts(
        image_id=str(found.id),
        torch_version=labels.get(LABEL_TORCH, "unknown"),
        worker_sha256=labels.get(LABEL_WORKER, "unknown"),
    )


def image_exists(tag: str) -> bool:
    try:
        with engine_errors(f"cannot inspect image {tag!r}"):
            client().images.get(tag)
    except Missing:
        return False
    return True


def requirements(torch_version: str) -> list[str]:
    return [f"torch=={torch_version}", *EXTRA_PACKAGES]


def assemble_context(
    dest: Path, worker: Path, dockerfile: Path, wheelhouse: Path | None, torch_version: str
) -> None:
    """Fill `dest` with what the image needs: the Dockerfile, the worker's modules (from the
    package folder `worker`) under `sandbox/`, requirements, wheels."""
    shutil.copyfile(dockerfile, dest / "Dockerfile")
    (dest / "requirements.txt").write_text("\n".join(requirements(torch_version)) + "\n")
    (dest / "sandbox").mkdir()
    for module in worker_files(worker):
        shutil.copyfile(module, dest / "sandbox" / module.name)
    wheels = dest / "wheelhouse"
    wheels.mkdir()
    if wheelhouse is None:
        return
    found = sorted(wheelhouse.glob("*.whl"))
    if not found:
        raise ImageError(f"no wheels in {wheelhouse}")
    for wheel in found:
        try:
            os.link(wheel, wheels / wheel.name)
        except OSError:
            shutil.copyfile(wheel, wheels / wheel.name)


def build_image(
    tag: str = DEFAULT_TAG,
    *,
    base_image: str | None = None,
    wheelhouse: Path | None = None,
    torch_index_url: str | None = None,
    torch_version: str = TORCH_VERSION,
    worker: Path = SANDBOX_DIR,
    dockerfile: Path = DOCKERFILE,
    on_line: OnLine = _ignore,
) -> ImageFacts:
    """Build the sandbox image; with a wheelhouse the build runs with networking off."""
    if not (worker / "__main__.py").is_file():
        raise ImageError(f"worker not found: {worker}")
    buildargs = {"TORCH_VERSION": torch_version, "WORKER_SHA256": worker_sha256(worker)}
    if base_image is not None:
        buildargs["BASE_IMAGE"] = base_image
    if wheelhouse is None and torch_index_url:
        buildargs["TORCH_INDEX_URL"] = torch_index_url
    with tempfile.TemporaryDirectory(prefix="grader-context-") as tmp:
        context = Path(tmp)
        assemble_context(context, worker, dockerfile, wheelhouse, torch_version)
        try:
            with engine_errors("docker build failed"):
                log = client().api.build(
                    path=str(context),
                    tag=tag,
                    buildargs=buildargs,
                    network_mode="none" if wheelhouse is not None else None,
                    rm=True,
                    decode=True,
                    timeout=None,
                )
                _follow(log, on_line)
        except DockerError as exc:
            raise ImageError(str(exc)) from exc
    return image_facts(tag)


def _follow(log: Iterable[dict[str, Any]], on_line: OnLine) -> None:
    """Pass each line of a build's log to `on_line`; raise `ImageError` on a failed step."""
    tail: list[str] = []
    for entry in log:
        for line in str(entry.get("stream", "")).splitlines():
            on_line(line)
            tail = [*tail[-19:], line]
        if "error" in entry:
            raise ImageError("docker build failed:\n" + "\n".join([*tail, str(entry["error"])]))


def download_wheelhouse(
    dest: Path,
    *,
    torch_version: str = TORCH_VERSION,
    packages: Sequence[str] | None = None,
    python_version: str = PYTHON_VERSION,
    torch_index_url: str | None = None,
    refresh: bool = False,
    on_line: OnLine = _ignore,
) -> list[Path]:
    """Download wheels for `python_version` on Linux x86_64: `packages` (by default the image's:
    torch and `EXTRA_PACKAGES`) with their dependencies.

    pip's own configuration applies, so a local torch CPU wheel found through `find-links`
    is preferred; `torch_index_url` adds an index that serves CPU builds. A wheelhouse that
    holds a completed download of the same requirements is reused unless `refresh`.
    """
    dest.mkdir(parents=True, exist_ok=True)
    stamp = dest / ".requirements"
    packages = list(packages or requirements(torch_version))
    wanted = "\n".join([*packages, f"python {python_version}"]) + "\n"
    if not refresh and stamp.is_file() and stamp.read_text() == wanted:
        on_line(f"wheelhouse {dest} is complete")
        return sorted(dest.glob("*.whl"))
    argv = [
        sys.executable, "-m", "pip", "download", "--disable-pip-version-check",
        *packages,
        "--only-binary=:all:", "--python-version", python_version,
        "--implementation", "cp", "--abi", "cp" + python_version.replace(".", ""),
        "--dest", str(dest),
    ]  # fmt: skip
    for platform in WHEEL_PLATFORMS:
        argv += ["--platform", platform]
    if torch_index_url:
        argv += ["--extra-index-url", torch_index_url]
    _stream(argv, on_line, "pip download")
    wheels = sorted(dest.glob("*.whl"))
    if not any(w.name.startswith(f"torch-{torch_version}") for w in wheels):
        raise ImageError(f"no torch {torch_version} wheel in {dest}")
    stamp.write_text(wanted)
    return wheels


def make_rootfs_tarball(
    tarball: Path, *, suite: str = "bookworm", mirror: str | None = None, on_line: OnLine = _ignore
) -> Path:
    """debootstrap a minimal `suite` with python3 + venv and pack it as a tar (needs root)."""
    if shutil.which("debootstrap") is None:
        raise ImageError("debootstrap is not installed")
    if os.geteuid() != 0:
        raise ImageError("debootstrap needs root")
    tarball.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rootfs-", dir=tarball.parent) as tmp:
        rootfs = Path(tmp) / "rootfs"
        argv = ["debootstrap", "--variant=minbase", "--include=python3,python3-venv", suite]
        argv += [str(rootfs), *([mirror] if mirror else [])]
        _stream(argv, on_line, "debootstrap")
        for rel in _ROOTFS_TRIM:
            target = rootfs / rel
            for child in target.iterdir() if target.is_dir() else ():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        for name, text in (("resolv.conf", ""), ("hostname", "sandbox\n")):
            host_copy = rootfs / "etc" / name  # debootstrap copies the host's own
            host_copy.unlink(missing_ok=True)
            host_copy.write_text(text)
        partial = Path(tmp) / "rootfs.tar"
        _stream(
            ["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(partial), "."],
            on_line,
            "tar",
        )
        partial.replace(tarball)
    return tarball


def make_base_image(
    name: str = DEFAULT_BASE,
    *,
    cache_dir: Path = CACHE_DIR,
    suite: str = "bookworm",
    mirror: str | None = None,
    refresh: bool = False,
    on_line: OnLine = _ignore,
) -> str:
    """Import a debootstrap rootfs as image `name`, reusing the cached tarball; return its id."""
    if not refresh and image_exists(name):
        on_line(f"base image {name} already present")
        return image_facts(name).image_id
    tarball = cache_dir / f"rootfs-{suite}.tar"
    if refresh or not tarball.is_file():
        make_rootfs_tarball(tarball, suite=suite, mirror=mirror, on_line=on_line)
    else:
        on_line(f"using cached {tarball}")
    repository, tag = parse_repository_tag(name)
    changes = [f"ENV {_IMPORT_PATH}", 'CMD ["/bin/sh"]']
    try:
        with engine_errors(f"cannot import {tarball}"):
            client().api.import_image(str(tarball), repository, tag, changes=changes)
    except DockerError as exc:
        raise ImageError(str(exc)) from exc
    return image_facts(name).image_id
