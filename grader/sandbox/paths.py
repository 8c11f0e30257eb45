"""Where the sandbox's own files live, inside the package: the worker and the image's
Dockerfile."""

from pathlib import Path

SANDBOX_DIR = Path(__file__).resolve().parent
WORKER_FILE = SANDBOX_DIR / "worker.py"
DOCKERFILE = SANDBOX_DIR / "Dockerfile"
