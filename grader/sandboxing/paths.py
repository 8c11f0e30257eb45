"""Where the sandbox's own files live: the `sandbox` package beside `grader` (the worker, the
image's Dockerfile), in a checkout as in an installed wheel."""

import hashlib
from pathlib import Path

import sandbox

SANDBOX_DIR = Path(sandbox.__file__).resolve().parent
WORKER_FILE = SANDBOX_DIR / "__main__.py"
"""The worker's entry: `python3 -I WORKER_FILE ...` runs it, wherever the package is."""
DOCKERFILE = SANDBOX_DIR / "Dockerfile"


def worker_files(folder: Path = SANDBOX_DIR) -> list[Path]:
    """The worker's modules: what goes into the image."""
    return sorted(folder.glob("*.py"))


def worker_sha256(folder: Path = SANDBOX_DIR) -> str:
    """One digest of the worker's modules, their names and bytes."""
    digest = hashlib.sha256()
    for path in worker_files(folder):
        digest.update(f"{path.name}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    return digest.hexdigest()
