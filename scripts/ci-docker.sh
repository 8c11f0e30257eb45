#!/usr/bin/env bash
# Make the docker sandbox ready on a Debian bookworm machine (idempotent, for CI):
# install docker.io + debootstrap if missing, start dockerd if it is not answering, then build
# the sandbox image air-gapped: a debootstrap base image (`docker import`), a wheelhouse, and
# `docker build --network none`. The rootfs tarball and wheels are cached under .cache/sandbox.
# Needs root and the project installed (`pip install -e .`).
set -euo pipefail

cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
CACHE=.cache/sandbox
BASE=attention-grader-base:bookworm
TAG=${GRADER_DOCKER_IMAGE:-attention-grader-sandbox:latest}
DOCKERD_LOG=${DOCKERD_LOG:-/tmp/dockerd.log}

log() { printf '[ci-docker %s] %s\n' "$(date +%T)" "$*" >&2; }
sandbox() { "$PY" -c 'from grader.cli.platforms import sandbox; sandbox()' "$@"; }

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if ! mountpoint -q /sys/fs/cgroup && ! command -v cgroupfs-mount >/dev/null; then
    missing+=(cgroupfs-mount)
fi
if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! mountpoint -q /sys/fs/cgroup; then
    cgroupfs-mount
fi

if ! docker info >/dev/null 2>&1; then
    if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
        rm -f /var/run/docker.pid
    fi
    log "starting dockerd (log: $DOCKERD_LOG)"
    setsid nohup dockerd >"$DOCKERD_LOG" 2>&1 </dev/null &
    for _ in $(seq 60); do
        docker info >/dev/null 2>&1 && break
        sleep 1
    done
    if ! docker info >/dev/null 2>&1; then
        tail -n 30 "$DOCKERD_LOG" >&2
        log "dockerd did not come up"
        exit 1
    fi
fi
log "engine $(docker version --format '{{.Server.Version}}')"

log "base image $BASE"
sandbox base --name "$BASE" --cache-dir "$CACHE"
log "wheelhouse $CACHE/wheelhouse"
sandbox wheelhouse --dest "$CACHE/wheelhouse" >/dev/null
log "building $TAG (network off)"
sandbox build --tag "$TAG" --base-image "$BASE" --wheelhouse "$CACHE/wheelhouse" --quiet
sandbox clean
log "done"
