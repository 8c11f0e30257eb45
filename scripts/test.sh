#!/usr/bin/env bash
# The project's test command: lint, types, the catalog's proof of its own checks, the tests.
# Where a Docker engine answers, the Docker tests are required to run (not skipped); so is the
# browser test where Chromium is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

ruff check .
ruff format --check .
mypy grader sandbox tests benchmarks
grader validate --jobs 2 --strict-probes
if docker info >/dev/null 2>&1; then
    export GRADER_DOCKER_TESTS=1
fi
if command -v chromium >/dev/null; then
    export GRADER_BROWSER_TESTS=1
fi
pytest -q --durations=15
