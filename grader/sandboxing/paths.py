"""Where the sandbox's own files live: the `sandbox` package beside `grader` (the worker, the
image's Dockerfile), in a checkout as in an installed wheel."""

from pathlib import Path

import sandbox

SANDBOX_DIR = Path(sandbox.__file__).resolve().parent
WORKER_FILE = SANDBOX_DIR / "worker.py"
DOCKERFILE = SANDBOX_DIR / "Dockerfile"
