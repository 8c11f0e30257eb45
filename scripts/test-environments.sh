#!/usr/bin/env bash
# The environment matrix: the built wheels (the grader and the built-in course), installed the
# ways people install them, on the torch builds people have, grades the complete example
# (180/180) and proves the catalog
# (`grader validate`: every reference and accepted solution full marks, every mutant caught).
#
#   bash scripts/test-environments.sh [CELL ...]     (default: every cell; --list names them)
#
# Cells (torch, layout):
#   2.13-venv        torch 2.13.0 (this machine's CPU wheel) and the wheel in one virtualenv
#   2.13-system      a virtualenv --system-site-packages holding the wheel only; torch 2.13.0
#                    and the dependencies in the interpreter's own site-packages
#   2.13-user        `pip install --user` (a user site: PYTHONUSERBASE), the rest the system's
#   2.14-venv        torch 2.14.1 from PyPI: a CUDA build, what `pip install torch` gives
#   2.14-target      the wheel and typing_extensions by `pip install --target T`, PYTHONPATH=T
#   2.11-target      the same on torch 2.11.0 (CUDA)
#   2.2-venv         torch 2.2.2, the oldest the package declares (with numpy<2, as it needs)
# and, named only, not run by default:
#   host-system      as 2.13-system over whatever torch this interpreter has: on a GPU host,
#                    its CUDA build, 16 cores and a visible GPU (the candidate's code sees none)
#
# The torch virtualenvs (several GB each, some ten minutes to make here) are cached under
# $GRADER_MATRIX_CACHE (default ~/.cache/attention-grader/matrix) and reused; a cell's own
# install is made anew each run. Not part of `.ci/run` (its first run downloads ~15 GB); run it
# after a change to the worker, the guard or the packaging. Exit status: 0 when every cell holds.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
CACHE=${GRADER_MATRIX_CACHE:-$HOME/.cache/attention-grader/matrix}
ALL=(2.13-venv 2.13-system 2.13-user 2.14-venv 2.14-target 2.11-target 2.2-venv)
declare -A TORCH=([2.13]=2.13.0 [2.14]=2.14.1 [2.11]=2.11.0 [2.2]=2.2.2 [host]=)

if [[ "${1:-}" == "--list" ]]; then printf '%s\n' "${ALL[@]}" host-system; exit 0; fi
cells=("$@")
((${#cells[@]})) || cells=("${ALL[@]}")

log() { printf '[matrix %s] %s\n' "$(date +%T)" "$*" >&2; }
WORK=$(mktemp -d /tmp/grader-matrix-XXXX)
trap 'rm -rf "$WORK"' EXIT

"$PY" -m pip wheel -q --no-deps --no-build-isolation -w "$WORK/dist" "$ROOT" "$ROOT/packaging/course" \
    >/dev/null || exit 2
WHEEL=$(ls "$WORK"/dist/attention_grader-*.whl)
WHEELS=("$WHEEL" "$(ls "$WORK"/dist/attention_grader_course-*.whl)")  # what a cell installs

torch_venv() {  # the cached virtualenv holding torch $1 and the wheel's dependencies: its python
    local version=$1 venv="$CACHE/torch-$1"
    if ! "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')" 2>/dev/null; then
        log "making $venv (torch $version: a few GB, once)"
        rm -rf "$venv" && mkdir -p "$CACHE" && "$PY" -m venv "$venv" || return 1
        "$venv/bin/pip" install -q "torch==$version" >&2 || return 1
    fi
    local extra=()
    [[ "$version" == 2.2.* ]] && extra=("numpy<2")  # torch 2.2 was built against numpy 1
    "$venv/bin/pip" install -q "${extra[@]}" "$WHEEL" >&2 || return 1  # its dependencies, cached
    "$venv/bin/pip" uninstall -q -y attention-grader >&2 || return 1  # a cell installs the wheel
    echo "$venv/bin/python"
}

# run_cell NAME PYTHON [ENV=VALUE ...]: the grader as that interpreter (and environment) finds it
run_cell() {
    local name=$1 python=$2 out="$WORK/$1"
    shift 2
    mkdir -p "$out"
    cp -r "$ROOT/submissions" "$out/submissions"
    local grader=(env -u PYTHONPATH "$@" "$python" -c "from grader.cli.main import main; main()")
    (cd "$out" && "${grader[@]}" --version && "${grader[@]}" grade submissions --backend local \
        --out reports) >"$out/grade.log" 2>&1
    local score
    score=$("$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); print(f\"{r['total']:g}/{r['max_total']:g}\")" \
        "$out/reports/complete.json" 2>/dev/null || echo "no report")
    (cd "$out" && "${grader[@]}" validate --jobs 2) >"$out/validate.log" 2>&1
    local validated=$? summary
    summary=$(tail -n 1 "$out/validate.log")
    local torch
    torch=$(cd "$out" && env -u PYTHONPATH "$@" "$python" -c "import torch; print(torch.__version__)" 2>/dev/null)
    if [[ "$score" == 180/180 && $validated == 0 ]]; then
        printf '%-12s torch %-13s complete %s, validate all ok (%s)\n' "$name" "$torch" "$score" "$summary"
        return 0
    fi
    printf '%-12s torch %-13s complete %s, validate exit %s: FAILED\n' "$name" "$torch" "$score" "$validated"
    tail -n 5 "$out/grade.log" "$out/validate.log" | sed 's/^/    /'
    return 1
}

cell() {
    local name=$1 version=${TORCH[${1%%-*}]-} layout=${1#*-} python
    case $layout in
        venv)
            python=$(torch_venv "$version") || return 1
            "${python%/python}/pip" install -q --no-deps "${WHEELS[@]}" >&2 || return 1
            run_cell "$name" "$python"
            "${python%/python}/pip" uninstall -q -y attention-grader attention-grader-course >&2
            ;;
        system)
            "$PY" -m venv --system-site-packages "$WORK/$name-venv" || return 1
            "$WORK/$name-venv/bin/pip" install -q --no-deps "${WHEELS[@]}" >&2 || return 1
            run_cell "$name" "$WORK/$name-venv/bin/python"
            ;;
        user)
            PYTHONUSERBASE="$WORK/$name-user" "$PY" -m pip install -q --user --no-deps \
                "${WHEELS[@]}" >&2 || return 1
            run_cell "$name" "$PY" PYTHONUSERBASE="$WORK/$name-user"
            ;;
        target)
            python=$(torch_venv "$version") || return 1
            "${python%/python}/pip" install -q --no-deps --target "$WORK/$name-target" \
                "${WHEELS[@]}" typing_extensions >&2 || return 1
            run_cell "$name" "$python" PYTHONPATH="$WORK/$name-target"
            ;;
        *) log "no cell $name (--list names them)"; return 2 ;;
    esac
}

failed=0
for name in "${cells[@]}"; do
    log "cell $name"
    cell "$name" || failed=1
done
exit $failed
