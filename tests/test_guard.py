"""The sandbox's policy guard, armed in a process of its own as in a problem's child: every
route to a refused attention operator is refused where the call is made, an allowed family's
public operator runs (traced) with its values and gradients unchanged, and the audit hook
refuses code that was not handed in and the introspection that reaches the grader's objects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from sandbox.protocol import FAMILIES, family_of
from tests.conftest import ROOT

REFUSED_EVERYWHERE = [
    "private_math",
    "private_flash",
    "flash_without_autograd",
    "native_mha",
    "module_mha",
    "functional_mha",
    "quantizable_mha",
    "quantizable_impl",
    "onnx_attention",
    "onnx_registry",
    "onnx_decomposition",
    "custom_op_function",
    "vmap_sdpa",
    "vmap_private_math",
    "meta_sdpa",
    "traced_sdpa",
]
TAMPERING = {
    "frame_walk": "tb_frame",
    "own_frame": "sys._getframe",
    "garbage_collector": "gc.get_objects",
    "text": "compiling text into code",
    "timeit_text": "compiling text into code",
    "pickled_exec": "compiling text into code",
    "annotation_text": "running code made from text",
    "written_module": "compiling code under the name of /tmp/",
    "borrowed_name": "compiling code under the name of",
    "ctypes_load": "ctypes.dlopen",
    "bdb_frames": "tb_frame",
    "asyncio_frames": "cr_frame",
    "import_callback_frames": "sys._getframe",
    "locals_of_frames": "sys._getframe",
    "called_annotation": "running code made from text",
}
HONEST = [
    "manual",
    "dataclass_config",
    "named_tuple_config",
    "jit_scripted",
    "sympy_imported",
    "printed_traceback",
    "evaluated_annotation",
    "typing_subscripts",
    "checkpointed",
]


def guarded(
    refuse: list[str], routes: list[str], old_torch: bool = False
) -> dict[str, dict[str, Any]]:
    """Each route's outcome in a child that armed the guard refusing these families (on a torch
    without `torch.library.get_kernel`, if `old_torch`)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.guard_child", ",".join(refuse), *routes],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env={**os.environ, "OLD_TORCH": "1"} if old_torch else None,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {line["route"]: line for line in lines}


@pytest.fixture(scope="module")
def refusing_all() -> dict[str, dict[str, Any]]:
    routes = ["public_sdpa", "registry_sdpa", *REFUSED_EVERYWHERE, *TAMPERING, *HONEST]
    return guarded(list(FAMILIES), [*routes, "own_kernel"])


@pytest.mark.parametrize("route", ["public_sdpa", "registry_sdpa", *REFUSED_EVERYWHERE])
def test_every_route_to_a_refused_operator_is_refused_and_recorded(
    refusing_all: dict[str, dict[str, Any]], route: str
) -> None:
    found = refusing_all[route]
    assert found["outcome"] == "refused", found
    assert [e["kind"] for e in found["events"]] == ["forbidden"], found


@pytest.mark.parametrize("route", sorted(TAMPERING))
def test_the_audit_hook_refuses_what_reaches_the_grader_or_unread_code(
    refusing_all: dict[str, dict[str, Any]], route: str
) -> None:
    found = refusing_all[route]
    assert found["outcome"] == "refused", found
    tampering = [e["what"] for e in found["events"] if e["kind"] == "tampering"]
    assert tampering and TAMPERING[route] in tampering[0], found


@pytest.mark.parametrize("route", HONEST)
def test_honest_code_runs_untouched(refusing_all: dict[str, dict[str, Any]], route: str) -> None:
    assert refusing_all[route] == {"route": route, "outcome": "ran", "trace": [], "events": []}


def test_a_kernel_registered_over_the_guards_is_tampering(
    refusing_all: dict[str, dict[str, Any]],
) -> None:
    """Registering over the guard's kernel gives no way to the kernel it fronts (the guard
    holds that, out of reach): the candidate's kernel runs its own code, and the guard's check
    finds its kernel lost."""
    lost = [e["what"] for e in refusing_all["own_kernel"]["events"]]
    assert any("lost its kernel for aten::scaled_dot_product_attention" in w for w in lost), lost


def test_an_allowed_family_runs_traced_and_its_private_operators_stay_refused() -> None:
    routes = ["public_sdpa", "registry_sdpa", "vmap_sdpa", "private_math"]
    found = guarded(["multi_head_attention"], routes)
    for route in ("public_sdpa", "registry_sdpa", "vmap_sdpa"):
        assert found[route]["outcome"] == "ran" and not found[route]["events"], found[route]
        (call,) = found[route]["trace"]
        assert call["fn"] == "scaled_dot_product_attention" and call["is_causal"] is True
    assert found["private_math"]["outcome"] == "refused"


def test_on_a_torch_without_get_kernel_refused_families_stay_refused() -> None:
    """Its kernels cannot be called through ours: refusing kernels for the refused families
    only, and the allowed SDPA traced by its Python name (its private variants then run)."""
    routes = ["public_sdpa", "private_math", "native_mha", "module_mha", "manual"]
    refusing = guarded(list(FAMILIES), routes, old_torch=True)
    assert [refusing[r]["outcome"] for r in routes] == ["refused"] * 4 + ["ran"]
    allowing = guarded(["multi_head_attention"], ["public_sdpa", "native_mha"], old_torch=True)
    assert allowing["public_sdpa"]["outcome"] == "ran" and not allowing["public_sdpa"]["events"]
    assert allowing["public_sdpa"]["trace"][0]["is_causal"] is True
    assert allowing["native_mha"]["outcome"] == "refused"


def test_families_are_read_from_names() -> None:
    assert family_of("MultiheadAttention") == "multi_head_attention"
    assert family_of("multi_head_attention_forward") == "multi_head_attention"
    assert family_of("_native_multi_head_attention") == "multi_head_attention"
    assert family_of("scaled_dot_product_attention") == "scaled_dot_product_attention"
    assert family_of("_scaled_dot_product_flash_attention_for_cpu") == FAMILIES[1]
    assert family_of("softmax") is None


SAME_VALUES = """
import torch, torch.nn.functional as F
from sandbox.guard import GUARD

def run(dtype, causal):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, dtype=dtype, requires_grad=True) for _ in range(3))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    GUARD.local.backward = True
    (y * torch.randn_like(y)).sum().backward()
    GUARD.local.backward = False
    return [y.detach(), q.grad, k.grad, v.grad]

cases = [(d, c) for d in (torch.float32, torch.float64) for c in (True, False)]
before = [run(*case) for case in cases]
GUARD.install()
GUARD.arm(["multi_head_attention"], "/nonexistent", {})
after = [run(*case) for case in cases]
print(all(torch.equal(a, b) for x, y in zip(before, after) for a, b in zip(x, y)))
"""


def test_an_allowed_sdpa_gives_bit_identical_values_and_gradients_under_the_guard() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SAME_VALUES], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "True", done.stderr
    assert "autograd kernel was not registered" not in done.stderr


NO_PROGRAMS = """
import multiprocessing, os, subprocess, sys
from sandbox.processes import deny_exec

assert deny_exec()
for start in (lambda: subprocess.run(["true"]), lambda: os.execv(sys.executable, [sys.executable])):
    try:
        start()
        print("ran")
    except PermissionError:
        print("refused")
spawned = multiprocessing.get_context("spawn").Process(target=print)
spawned.start()
spawned.join()
print("spawn exit", spawned.exitcode)
forked = os.fork()
if forked == 0:
    os._exit(7)
print("fork exit", os.waitstatus_to_exitcode(os.waitpid(forked, 0)[1]))
"""


def test_a_child_cannot_start_another_program_which_would_run_unguarded() -> None:
    """A fresh interpreter (a subprocess, `multiprocessing`'s spawn) would run without the
    policy guard: the kernel refuses every exec to a problem's child; forking still works."""
    done = subprocess.run(
        [sys.executable, "-c", NO_PROGRAMS], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.split("\n")[:4] == ["refused", "refused", "spawn exit 255", "fork exit 7"]


BASELINE = """
import json, os, resource
from sandbox.processes import io_priority, own_state, reset_inherited

baseline = own_state()
io_priority(3 << 13)  # the idle class
os.umask(0o077)
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (soft // 2, hard))
changed = own_state()
reset_inherited(baseline)
print(json.dumps([baseline, changed, own_state()]))
"""


def test_a_problem_starts_from_the_workers_state_whatever_was_changed_in_it() -> None:
    """I/O priority, umask, CPU affinity and a soft limit changed in the worker (a process of
    the same uid can change them) are set back in a problem's child before candidate code."""
    done = subprocess.run(
        [sys.executable, "-c", BASELINE], cwd=ROOT, capture_output=True, text=True, check=True
    )
    baseline, changed, reset = json.loads(done.stdout)
    for key in ("ioprio", "umask", "rlimits"):
        assert changed[key] != baseline[key] and reset[key] == baseline[key], key
    if len(baseline["affinity"]) > 1:
        assert changed["affinity"] != baseline["affinity"] == reset["affinity"]


UNLISTED = """
import importlib, sys
from sandbox.guard import GUARD, before_forks, unlisted

GUARD.install()
before_forks()  # the worker's pass: the sandbox's modules leave sys.modules
first = sorted(n for n in sys.modules if n.startswith("sandbox"))
unlisted()  # a problem's child, nothing added since
second = sorted(n for n in sys.modules if n.startswith("sandbox"))
importlib.import_module("sandbox.counter")  # one of the sandbox's imported after the pass
unlisted()
print(first, second, sorted(n for n in sys.modules if n.startswith("sandbox")))
"""


def test_a_module_of_the_sandbox_imported_after_the_workers_pass_leaves_sys_modules() -> None:
    """A problem's child skips the pass over `sys.modules` when nothing was added since the
    worker's, and makes it when something was: a module of the sandbox imported since leaves."""
    done = subprocess.run(
        [sys.executable, "-c", UNLISTED], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.split("\n")[0] == "[] [] []"
