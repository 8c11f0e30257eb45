"""The policy guard, installed once per worker and armed in each problem's child.

A problem's policy is enforced where a call happens: in the candidate's own process, at torch's
layers. Every operator of the attention families that torch's dispatcher knows (derived from its
registry: public or private, on every dispatch key a CPU tensor reaches) runs a kernel of ours
first; torch's Python functions, modules and higher-order operators that compute attention are
neutered, in the problem's child, for the families it refuses. A refused call raises `Refused`
and is recorded: it costs the values it would have produced. An allowed family's public operator
runs (and is traced) with its private operators beneath it. The audit hook (`audit.py`) and a
seccomp filter (`processes.py`) do the rest. Nothing the candidate's code can reach leads to the
guard's objects: the sandbox's modules leave `sys.modules`, and what the candidate is handed (the
stub module, the operation counter, the import hook) has globals of its own.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.machinery
import inspect
import os
import sys
import types
import warnings
from collections.abc import Callable
from typing import Any, final

import torch

from sandbox.audit import Auditor
from sandbox.policy import (
    ATTENTION_MODULES,
    COMPOSITE,
    MISSING,
    NO_BYTECODE,
    TRACER,
    Canary,
    Flags,
    Neutered,
    PythonTarget,
    attention_operators,
    compiled,
    describe_call,
    in_place,
    op_schema,
    python_targets,
    refusing,
    sealed,
)
from sandbox.processes import c_library, exec_filter
from sandbox.protocol import FAMILIES, PolicyEvent, family_of


@final
class Guard(Auditor):
    """The policy guard: installed once per worker process, before any fork; armed in each
    problem's child with the families its problem refuses, before the candidate's code is
    imported. Unarmed it lets every call through (the worker's own warm-up; the host's reference
    runs never install it)."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse: frozenset[str] = frozenset(FAMILIES)
        self.policy = self.refuse  # as armed: what `refuse` must still be
        self.local = Flags()
        self.canary = False
        self.kernels: dict[tuple[str, str], str] = {}  # (operator, key) -> its kernel's origin
        self.kernel_keys: list[tuple[str, Any, str]] = []  # the same, the key as torch's enum
        self.targets: list[PythonTarget] = []
        self.neutered: list[Neutered] = []
        self.sdpa: Any = None

    # -- installing: trusted code only, before any candidate code runs

    def install(self) -> None:
        """Put a kernel of ours in front of every attention operator on every key a CPU
        tensor reaches, and find torch's Python attention to neuter when armed. A torch too old
        to hand out the kernels it runs (`torch.library.get_kernel`, 2.9) gets its kernels when
        the guard is armed: refusing ones, for the refused families only."""
        for name in ATTENTION_MODULES:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
        self.sdpa = torch._C._nn.scaled_dot_product_attention
        self.locate()
        if hasattr(torch.library, "get_kernel"):
            self.register_all(refuse_only=False)
        self.targets = python_targets()
        self.neuter()
        KNOWN.update((name, ours(module)) for name, module in list(sys.modules.items()))

    def library(self, namespace: str) -> Any:
        """Our library of kernels for an operator namespace (`aten`, `onnx`), kept in
        `LIBRARIES`, out of the candidate's reach, for the process's life."""
        for library in LIBRARIES:
            if library.ns == namespace:
                return library
        library = torch.library.Library(namespace, "IMPL")
        LIBRARIES.append(library)
        return library

    def register_all(self, refuse_only: bool) -> None:
        """Our kernels for every attention operator (with `refuse_only`, for those of the
        refused families, refusing whatever the state), and what the table then says."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
            for op, keys in attention_operators().items():
                if refuse_only and family_of(op.partition("::")[2]) not in self.refuse:
                    continue
                names = [a.name for a in op_schema(op).arguments]
                library = self.library(op.partition("::")[0])
                for key in keys:
                    self.register(library, op, key, names, refuse_only)
        if hasattr(torch.library, "get_kernel"):
            for op, key in self.kernels:
                self.kernels[(op, key)] = repr(torch.library.get_kernel(op, key))
            members = torch._C.DispatchKey.__members__
            self.kernel_keys = [(op, members[key], o) for (op, key), o in self.kernels.items()]

    def register(
        self, library: Any, op: str, key: str, names: list[str], refuse_only: bool
    ) -> None:
        """A kernel of ours in front of `op` on `key`, calling the kernel it replaces."""
        runtime_key = "CPU" if key == COMPOSITE else key
        original = None
        if not refuse_only:
            try:
                original = torch.library.get_kernel(op, runtime_key)
            except ValueError:  # a key torch's Python side cannot name (MkldnnCPU)
                return
        name = op.partition("::")[2]
        kernel = self.kernel(name, names, original)
        try:
            if "with_keyset" in inspect.signature(library.impl).parameters:
                library.impl(name, kernel, key, with_keyset=True)
            else:  # torch before 2.3 hands a kernel no keyset: ours then only refuse
                library.impl(name, functools.partial(kernel, None), key)
        except (RuntimeError, ValueError):  # a key this torch cannot register on
            return
        checked = ("CPU", "AutogradCPU") if key == COMPOSITE else (key,)
        self.kernels.update({(op, k): "" for k in checked})

    def kernel(self, name: str, names: list[str], original: Any) -> Callable[..., Any]:
        """The kernel of ours in front of operator `name` (`name.overload`) on one key: a
        refused family's call is refused whatever else holds; an allowed family's public
        operator is traced, its private ones run only beneath it or in its backward pass."""
        family = family_of(name)
        public = not name.startswith("_")
        backward = name.partition(".")[0].endswith("_backward")
        fn = name.partition(".")[0]

        def guarded(keyset: Any, *args: Any, **kwargs: Any) -> Any:
            if self.canary:
                raise Canary
            if original is None or (self.armed and family in self.refuse):
                self.refused(f"torch's operator aten::{name}")
            local = self.local
            if self.armed and not local.depth and not (backward and local.backward):
                if not public:
                    self.refused(f"torch's operator aten::{name}")
                self.trace.append(describe_call(fn, names, args, kwargs))
                local.depth += 1
                try:
                    return original.call_boxed(keyset, *args, **kwargs)
                finally:
                    local.depth -= 1
            return original.call_boxed(keyset, *args, **kwargs)

        return guarded

    # -- arming, in a problem's child

    def arm(self, refuse: list[str], root: str, allowed: dict[str, bytes | None]) -> None:
        """Enforce the problem's policy from here on: refuse these families, accept code only
        from the libraries and from the problem's own files under `root` (`allowed`: each real
        path with its bytes as handed in, or None where the folder is read-only), read the
        candidate's modules from source only, and take this module out of the candidate's
        reach."""
        unknown = set(refuse) - set(FAMILIES)
        if unknown:
            raise ValueError(f"unknown policy families {sorted(unknown)}")
        self.refuse = self.policy = frozenset(refuse)
        self.root, self.allowed = root, allowed
        self.restore_allowed()
        source_only(root)
        if not self.kernels:
            self.register_all(refuse_only=True)
            self.trace_by_name()
        unlisted()
        self.armed = True
        sys.addaudithook(self.audit)

    def trace_by_name(self) -> None:
        """Where no kernel of ours fronts SDPA (a torch without get_kernel) and its family is
        allowed, `F.scaled_dot_product_attention` is traced by its Python name."""
        if FAMILIES[1] in self.refuse:
            return
        functional = torch.nn.functional
        original = functional.scaled_dot_product_attention
        functional.scaled_dot_product_attention = sealed(
            TRACER, "scaled_dot_product_attention", ORIGINAL=original
        )

    def neuter(self) -> None:
        """Give torch's Python attention refusing code: a function's own code where it has no
        closure (every reference to it then refuses), else the attribute or module entry that
        holds it. The originals stay with the guard, for the families a problem allows."""
        for target in self.targets:
            refused = refusing(target.qualname)
            function, attribute = target.function, target.attribute
            if attribute is None and not function.__closure__:
                original = (function.__code__, function.__defaults__, function.__kwdefaults__)
                function.__code__, function.__defaults__ = refused.__code__, None
                function.__kwdefaults__ = None
                self.neutered.append(
                    Neutered(target.family, function, None, refused.__code__, original)
                )
                continue
            if attribute is None:
                function, attribute = sys.modules[function.__module__], function.__name__
            original = vars(function).get(attribute, MISSING)
            if hasattr(original, "__wrapped__"):  # a decorated function: torch reads this
                refused.__wrapped__ = refused
            setattr(function, attribute, refused)
            self.neutered.append(Neutered(target.family, function, attribute, refused, original))

    def restore_allowed(self) -> None:
        """Give back their code to torch's Python attention of the families the problem allows."""
        kept = []
        for item in self.neutered:
            if item.family in self.refuse:
                kept.append(item)
            elif item.attribute is None:
                owner = item.owner
                owner.__code__, owner.__defaults__, owner.__kwdefaults__ = item.original
            elif item.original is MISSING:
                delattr(item.owner, item.attribute)
            else:
                setattr(item.owner, item.attribute, item.original)
        self.neutered = kept

    # -- the audit hook

    def check(self, full: bool) -> list[PolicyEvent]:
        """What of the guard is no longer in place: its state, torch's neutered Python
        attention, its kernel in front of SDPA; with `full`, that kernel without autograd too
        and every kernel of ours."""
        missing = [
            f"the refusal of {getattr(item.owner, '__qualname__', item.owner)}"
            for item in self.neutered
            if in_place(item) is not item.refusing
        ]
        state = (self.armed, self.refuse, self.local.depth, self.local.backward)
        if state != (True, self.policy, 0, False):
            missing.append("its state (armed, refused families, depth)")
        if ("aten::scaled_dot_product_attention", "CPU") in self.kernels:
            missing += self.canaries((False, True) if full else (False,))
        if full and self.kernel_keys:  # a torch that hands out its kernels (2.9 on)
            computed = torch._C._dispatch_get_computed_kernel_for_dispatch_key
            missing += [
                f"its kernel for {op} on {key.name}"
                for op, key, origin in self.kernel_keys
                if repr(computed(op, key)) != origin
            ]
        return [{"kind": "tampering", "what": f"the policy guard lost {m}"} for m in missing]

    def canaries(self, modes: tuple[bool, ...]) -> list[str]:
        """Call SDPA, with autograd and (`modes`) without, while our kernels raise `Canary`:
        one that does not raise it is no longer ours."""
        lost: list[str] = []
        self.canary = True
        try:
            for inference in modes:
                try:
                    with torch.inference_mode(inference):
                        tiny = torch.zeros(1, 1, 1, 1)
                        self.sdpa(tiny, tiny, tiny)
                except Canary:
                    continue
                except Exception:  # another kernel's error: not ours
                    pass
                lost.append("its kernel for aten::scaled_dot_product_attention")
        finally:
            self.canary = False
        return lost


LIBRARIES: list[Any] = []
"""The torch library that holds the guard's kernels: its registrations live while it does."""

IMPORT_HOOK = """
def hook(path, finder=None, root=None):
    if path == root or path.startswith(root + "/"):
        return finder(path)
    raise ImportError(path)
"""


def source_only(root: str) -> None:
    """The candidate's modules are compiled from their `.py` files, never from bytecode or
    extension modules found beside them."""
    finder = importlib.machinery.FileFinder.path_hook(
        (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES)
    )
    hook = sealed(IMPORT_HOOK, "hook")
    hook.__defaults__ = (finder, root)
    sys.path_hooks.insert(0, hook)
    for path in list(sys.path_importer_cache):
        if path == root or path.startswith(os.path.join(root, "")):
            del sys.path_importer_cache[path]
    sys.pycache_prefix = NO_BYTECODE


OWN_FOLDER = os.path.join(os.path.dirname(os.path.realpath(__file__)), "")
KNOWN: dict[str, bool] = {}
"""The modules the worker had when it installed the guard, by name, and whether each is one of
the sandbox's: a problem's child, forked later, then neither resolves a thousand paths nor
touches a thousand modules (each touch copies a page of the worker's). The worker imports no
module of its own after that, and no candidate code runs before a child's `unlisted`."""


def ours(module: object) -> bool:
    """Whether `module` is one of the sandbox's: its file lies in this folder, links resolved."""
    origin = getattr(module, "__dict__", {}).get("__file__")
    return isinstance(origin, str) and os.path.realpath(origin).startswith(OWN_FOLDER)


def unlisted() -> None:
    """Take the sandbox's modules out of `sys.modules`: the names that lead to them (`sandbox`,
    `sandbox.guard`, `__main__`) lead nowhere from the candidate's code, and a new import finds
    nothing (a problem's child takes their folder off `sys.path`). Their functions keep their
    globals. Where no module was added since the last pass (the worker's, before it forks),
    there is nothing to take out, and a problem's child does not touch a thousand names (each
    touch copies a page of the worker's)."""
    if UNLISTED and UNLISTED[0] == newest(sys.modules):
        return
    for name in list(sys.modules):
        known = KNOWN.get(name)
        if not (ours(sys.modules[name]) if known is None else known):
            continue
        if name == "__main__":
            sys.modules[name] = types.ModuleType(name)
        else:
            del sys.modules[name]
    UNLISTED[:] = [newest(sys.modules)]


UNLISTED: list[tuple[int, str | None]] = []
"""`sys.modules` as the last pass of `unlisted` left it (`newest`)."""


def newest(modules: dict[str, types.ModuleType]) -> tuple[int, str | None]:
    """How many entries a dict has and the name of its newest: a dict keeps its keys in the
    order they came, so both stay as they are until an entry is added (a removal alone can
    only take a module out)."""
    return len(modules), next(reversed(modules), None)


def before_forks() -> None:
    """Do once, in the worker before it forks, what each problem's child would otherwise do
    itself: compile the grader's sealed code, build the seccomp program, take the sandbox's
    modules out of `sys.modules` (the worker imports none after this; each child still checks)."""
    for source in (IMPORT_HOOK, TRACER):
        compiled(source)
    exec_filter()
    c_library()
    unlisted()


GUARD = Guard()
