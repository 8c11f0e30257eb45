"""The audit hook's half of the policy guard: which code may run and who may read a frame.

An audit hook, which Python code cannot remove, refuses code that was not handed in (or is not
the problem's), code made from text, frames, the garbage collector, ctypes, threads and trace
hooks, and records a call of torch's neutered Python attention.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import sysconfig
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NoReturn

import torch

from sandbox.counter import Counting
from sandbox.policy import (
    CODE_MAKERS,
    ELSEWHERE,
    FRAME_ATTRIBUTES,
    FRAME_EVENTS,
    FRAME_HANDLERS,
    FRAME_READERS,
    LIBRARY_READERS,
    MAX_EVENTS,
    REFUSAL,
    REFUSED_EVENT,
    REFUSED_EVENTS,
    SUMMARIZER,
    TEXT_RUNNERS,
    TRACED_EVENT,
    Refused,
    describe_call,
    names_only,
    op_schema,
)
from sandbox.protocol import OpCount, PolicyEvent, TraceEntry


def library_folders(sandbox_folder: str) -> tuple[str, ...]:
    """The folders of the code that was there before the candidate's: every folder on this
    worker's import path as it starts (`sys.path`: the interpreter's, a venv's and the system's
    site-packages, a user site, a `pip install --target` folder the package was found in),
    wherever the package and torch were installed. Never the working folder, a folder anyone may
    write (`/tmp`), nor anything in a source checkout (the course's answers are there)."""
    checkout = os.path.dirname(os.path.dirname(sandbox_folder))
    if not os.path.isfile(os.path.join(checkout, "pyproject.toml")):
        checkout = ""
    paths = sysconfig.get_paths()
    interpreter = [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]
    found: set[str] = set()
    for entry in [*sys.path, *interpreter]:
        if not entry or not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        folder = os.path.join(os.path.realpath(entry), "")
        shared = os.stat(folder).st_mode & stat.S_IWOTH
        inside = bool(checkout) and folder.startswith(os.path.join(checkout, ""))
        if not (shared or inside or folder == os.path.join(os.path.realpath(os.getcwd()), "")):
            found.add(folder)
    return tuple(sorted(found))


def helpers() -> int:
    """This process's Python threads but its own and its child processes, still running."""
    children = 0
    with contextlib.suppress(OSError):
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as listed:
                children += len(listed.read().split())
    return threading.active_count() - 1 + children


class Auditor:
    """The guard's audit hook and what it knows: where the libraries, the sandbox and the
    problem's files are, and the events it refused."""

    def __init__(self) -> None:
        self.armed = False
        self.trace: list[TraceEntry] = []
        self.events: list[PolicyEvent] = []
        self.root = ""
        self.allowed: dict[str, bytes | None] = {}  # the problem's files: real path -> bytes
        self.trusted: tuple[str, ...] = ()  # the libraries' folders and, last, the sandbox's
        self.libraries: tuple[str, ...] = ()  # the libraries' folders
        self.makers: tuple[str, ...] = ()  # the library files that may make code from text
        self.runners: tuple[str, ...] = ()  # the library files that run text they are given
        self.handlers: tuple[str, ...] = ()  # the library files that hand frames on
        self.readers: tuple[str, ...] = ()  # the code that may read a frame for itself
        self.typing = ""
        self.ast = ""
        self.auditing = False
        self.counted: OpCount | None = None  # the operation counter's, while it counts

    def locate(self) -> None:
        """Find the folders and files the hook's rules name: the libraries, the sandbox's own
        folder, the standard library's code makers, text runners and frame readers."""
        paths = sysconfig.get_paths()
        sandbox_folder = os.path.join(os.path.dirname(os.path.realpath(__file__)), "")
        self.libraries = library_folders(sandbox_folder)
        self.trusted = (*self.libraries, sandbox_folder)
        stdlib = os.path.realpath(paths["stdlib"])
        self.makers = tuple(os.path.join(stdlib, f) for f in CODE_MAKERS)
        self.runners = tuple(os.path.join(stdlib, f) for f in TEXT_RUNNERS)
        self.handlers = tuple(os.path.join(stdlib, f) for f in FRAME_HANDLERS)
        torch_folder = os.path.join(os.path.dirname(os.path.realpath(torch.__file__)), "")
        readers = [os.path.join(stdlib, f) for f in FRAME_READERS]
        readers += [os.path.join(folder, f) for folder in self.libraries for f in LIBRARY_READERS]
        self.readers = (*readers, torch_folder, sandbox_folder, "<frozen")
        self.typing = os.path.join(stdlib, "typing.py")
        self.ast = os.path.join(stdlib, "ast.py")

    def refused(self, what: str, kind: Literal["forbidden", "tampering"] = "forbidden") -> NoReturn:
        event: PolicyEvent = {"kind": kind, "what": what[:300]}
        if event not in self.events and len(self.events) < MAX_EVENTS:
            self.events.append(event)
        raise Refused(what + REFUSAL)

    def take_events(self) -> list[PolicyEvent]:
        events, self.events = self.events, []
        return events

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        """Refuse, where it happens: a neutered function's call; code that is not the problem's
        (run from a file not as handed in or not imported by the problem's files, compiled from
        text or under another file's name); and what reaches the grader's objects or runs
        unseen (frames, the garbage collector, ctypes, threads, trace hooks)."""
        if self.auditing or not self.armed:
            return
        if event in ELSEWHERE and self.counted is not None:
            self.counted["unseen"] += 1
        if event == REFUSED_EVENT:
            self.refused(str(args[0]))
        if event == TRACED_EVENT:
            names = [a.name for a in op_schema("aten::scaled_dot_product_attention").arguments]
            self.trace.append(describe_call("scaled_dot_product_attention", names, *args))
            return
        frame_read = event == "object.__getattr__" and args[1] in FRAME_ATTRIBUTES
        if event in ("exec", "compile") or frame_read or event in FRAME_EVENTS:
            self.auditing = True  # what the hook itself does raises events too
            try:
                caller = sys._getframe(1)
                if event == "exec":
                    problem = self.foreign_code(args[0], caller)
                elif event == "compile":
                    problem = self.compiled(args[0], args[1], caller)
                else:
                    problem = self.asked_by_candidate(str(args[1]) if frame_read else event, caller)
            finally:
                self.auditing = False
        elif event.startswith(REFUSED_EVENTS):
            problem = event
        else:
            return
        if problem is not None:
            self.refused(problem, "tampering")

    def asked_by_candidate(self, what: str, caller: Any) -> str | None:
        """`what`, refused unless the code that asked for it reads the frame for itself: the
        worker, torch (which formats the stack where a lazy call was queued) and the standard
        library's readers of a caller's module name (`FRAME_READERS`). Asked through `inspect`
        or `traceback` (which hand frames on), the asker is their caller; any other library that
        hands frames on (`bdb`, `asyncio`, a debugger) is refused with the candidate's code."""
        if self.summarized(caller):
            return None
        frame = caller
        while frame is not None and frame.f_code.co_filename in self.handlers:
            frame = frame.f_back
        if frame is None or frame.f_code.co_filename.startswith(self.readers):
            return None
        if self.importing_library(frame):
            return None
        return f"{what} (reaches frames, code or the grader's objects)"

    @contextlib.contextmanager
    def watching(self, counter: Counting | None) -> Iterator[None]:
        """While the operation counter counts a call: count as `unseen` each call of the
        candidate's Python code that runs outside the counter's sight (called back from inside
        an operator's kernel, while torch has the counter off its dispatch mode stack) or the
        sight of the watch for values leaving torch (called back from inside a torch function,
        `Tensor.apply_`, while torch has the watch off its function mode stack); each process or
        thread it starts (`ELSEWHERE`); and, as the call starts and ends, each process or
        Python thread of its own still running, which may do its work (a per-head loop run in a
        forked process scored as no loop)."""
        roots = (os.path.join(self.root, ""), os.path.join(os.path.realpath(self.root), ""))
        if counter is None or not self.root:
            yield
            return
        counted = counter.counted
        watched = torch._C._len_torch_function_stack
        counting = torch._C._len_torch_dispatch_stack

        def watch(frame: Any, event: str, arg: Any) -> None:
            own = event == "call" and frame.f_code.co_filename.startswith(roots)
            if own and not (watched() and counting()):
                counted["unseen"] += 1

        self.auditing = True  # the hook refuses profile hooks to everyone else
        sys.setprofile(watch)
        self.auditing = False
        self.counted = counted
        counted["unseen"] += helpers()
        try:
            yield
        finally:
            self.counted = None
            counted["unseen"] += helpers()
            self.auditing = True
            sys.setprofile(None)
            self.auditing = False

    def summarized(self, frame: Any) -> bool:
        """Whether frames are read by `traceback` into text and kept there (`print_exc`,
        `format_exc`, `print_stack`): its frame walk consumed by `StackSummary`, without the
        frames' locals."""
        while frame is not None and frame.f_code.co_filename in self.handlers:
            if frame.f_code.co_name == SUMMARIZER:
                return frame.f_locals.get("capture_locals", True) is False
            frame = frame.f_back
        return False

    def makes_code(self, caller: Any, runs: bool) -> bool:
        """Whether code made from text at `caller` (a frame) is the libraries' own: the
        standard library's classes made from their fields (`CODE_MAKERS`); a library's module
        generating code while it is imported (mpmath does, imported lazily by torch); and,
        compiled but not run, the import system's and `typing`'s (a string annotation becomes a
        ForwardRef). Anything else (the candidate's code, or `timeit`, `doctest`, `pickle`,
        `sympy`, torch's annotation reader asked by it) would run text the host never read."""
        filename = caller.f_code.co_filename
        if filename.startswith("<frozen importlib") or filename == self.typing:
            return not runs
        return filename in self.makers or self.importing_library(caller)

    def importing_library(self, frame: Any) -> bool:
        """Whether `frame` is a library's own work while one of its modules is imported: it and
        every frame up to the nearest module-level one are the libraries' (not the worker's, not
        a module that runs text it is given, not the candidate's code called back): what it
        does then is the library's (mpmath generates code, sympy's dispatch reads its caller)."""
        while frame is not None:
            filename = frame.f_code.co_filename
            library = filename.startswith(self.libraries) or filename.startswith("<frozen")
            if not library or filename.startswith(self.trusted[-1]):
                return False
            if filename.startswith(self.runners):
                return False
            if frame.f_code.co_name == "<module>":
                return True
            frame = frame.f_back
        return False

    def compiled(self, source: Any, filename: Any, caller: Any) -> str | None:
        """Why compiling `source` is refused, if it is: text compiled where only the libraries
        may, or a file's name given to text that is not that file as it is (or as handed in)."""
        name = os.fsdecode(filename) if isinstance(filename, str | bytes) else str(filename)
        if caller.f_code.co_filename == self.ast:
            return None  # `ast.parse`: a tree, not code (compiling a tree is a compile of its own)
        if name.startswith("<"):
            return None if self.makes_code(caller, runs=False) else "compiling text into code"
        text = source.encode() if isinstance(source, str) else source
        if not isinstance(text, bytes) or text != self.file_as_it_is(name):
            return f"compiling code under the name of {name}"
        return None

    def file_as_it_is(self, name: str) -> bytes | None:
        """A library's file as it is, or one of the problem's files as handed in; else None."""
        path = os.path.realpath(name)
        if path.startswith(os.path.join(self.root, "")):
            if path not in self.allowed:
                return None
            expected = self.allowed[path]
            if expected is not None:
                return expected
        elif not path.startswith(self.trusted):
            return None
        try:
            return Path(path).read_bytes()
        except OSError:
            return None

    def foreign_code(self, code: Any, caller: Any) -> str | None:
        """Why running `code` is refused, if it is: a file neither of the libraries nor one of
        the problem's as handed in, or text made into code where only the libraries may."""
        filename = getattr(code, "co_filename", "")
        if filename.startswith("<"):
            if filename.startswith("<frozen") or self.makes_code(caller, runs=True):
                return None
            if caller.f_code.co_filename == self.typing and names_only(code):
                return None  # a string annotation evaluated: `"torch.Tensor"`, no call in it
            return "running code made from text"
        path = os.path.realpath(filename)
        if path.startswith(os.path.join(self.root, "")):
            if path not in self.allowed:
                relative = os.path.relpath(path, self.root)
                return f"running {relative}, which no file of the problem imports"
            expected = self.allowed[path]
            with contextlib.suppress(OSError):
                if expected is None or Path(path).read_bytes() == expected:
                    return None
            return f"running {os.path.relpath(path, self.root)}, which is not as handed in"
        if path.startswith(self.trusted):
            return None
        return f"running code from {filename}, which was not handed in"

    # -- checking that it is in place
