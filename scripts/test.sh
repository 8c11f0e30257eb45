#!/usr/bin/env bash
# The project's test command: lint, types, the catalog's proof of its own checks, the tests.
# Where a Docker engine answers, the Docker tests are required to run (not skipped), and the
# catalog is proved in the sandbox; the browser test is required where Chromium is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

ruff check .
ruff format --check .
mypy grader sandbox tests benchmarks
backend=local
if docker info >/dev/null 2>&1; then
    export GRADER_DOCKER_TESTS=1
    backend=docker  # the sandbox's warm workers: a fifth of the local backend's time
fi
grader validate --jobs 2 --strict-probes --backend "$backend"
if command -v chromium >/dev/null; then
    export GRADER_BROWSER_TESTS=1
fi
pytest -q -n 2 --dist loadgroup --durations=15  # two at a time: tests/conftest.py groups them
