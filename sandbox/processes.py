"""The worker's processes: waiting for a problem's child, ending what it left, the seccomp
filter that refuses exec and threads, and the state a child inherits set back to the worker's.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import platform
import resource
import select
import signal
import time
from pathlib import Path

from sandbox.protocol import Json

PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
X32_SYSCALL_BIT = 0x40000000
CLONE_THREAD = 0x00010000
SYSCALLS = {"x86_64": (0xC000003E, 59, 322, 56, 435), "aarch64": (0xC00000B7, 221, 281, 220, 435)}
"""The audit architecture and the numbers of execve, execveat, clone and clone3, by machine."""
PR_SET_CHILD_SUBREAPER = 36
IOPRIO_WHO_PROCESS = 1
IOPRIO_SYSCALLS = {"x86_64": (251, 252), "aarch64": (30, 31)}
"""ioprio_set and ioprio_get, which Python does not wrap, by machine."""


def wait_child(pid: int, timeout: float) -> tuple[int | None, int | None, bool]:
    """Wait for a child up to `timeout` seconds: (exit code, signal, timed out)."""
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(pidfd)
    if not ready:
        return None, signal.SIGKILL, True
    return (*exit_of(status), False)


def exit_of(status: int | None) -> tuple[int | None, int | None]:
    """A wait status as (exit code, signal); neither when the child was not reaped."""
    if status is None:
        return None, None
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    return os.WEXITSTATUS(status), None


def process_tree() -> dict[int, tuple[int, bool]]:
    """Every process below this one: pid -> (parent pid, still running), read from /proc."""
    children: dict[int, list[tuple[int, bool]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                ppid, running = parent_and_state(int(entry))
                children.setdefault(ppid, []).append((int(entry), running))
    below: dict[int, tuple[int, bool]] = {}
    todo = [os.getpid()]
    while todo:
        parent = todo.pop()
        for pid, running in children.get(parent, []):
            below[pid] = (parent, running)
            todo.append(pid)
    return below


def parent_and_state(pid: int) -> tuple[int, bool]:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return int(fields[1]), fields[0] != b"Z"


def end_descendants() -> int:
    """SIGKILL and reap every process left below the worker, however it detached: orphans are
    this process's children (it is PID 1 or a child subreaper), so none is left when it has no
    child. Signals go through pidfds, to processes whose parent is still in the tree, so that a
    recycled pid is never hit. Returns how many were still running."""
    running: set[int] = set()
    while True:
        tree = process_tree()
        ours = tree.keys() | {os.getpid()}
        for pid, (_, alive) in tree.items():
            with contextlib.suppress(OSError):
                pidfd = os.pidfd_open(pid)
                try:
                    if parent_and_state(pid)[0] in ours:
                        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                finally:
                    os.close(pidfd)
            if alive:
                running.add(pid)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return len(running)
        time.sleep(0.001)


def remove_ipc() -> int:
    """Remove every System V shared memory segment, semaphore set and message queue."""
    libc = c_library()
    removed = 0
    for kind, remove in (("shm", libc.shmctl), ("sem", libc.semctl), ("msg", libc.msgctl)):
        with open(f"/proc/sysvipc/{kind}") as table:
            for line in table.readlines()[1:]:
                ipc_id = int(line.split()[1])
                args = (ipc_id, 0, 0, None) if kind == "sem" else (ipc_id, 0, None)  # IPC_RMID
                if remove(*args) == 0:
                    removed += 1
    return removed


class SockFilter(ctypes.Structure):
    """A classic BPF instruction (`struct sock_filter`)."""

    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint),
    ]


class SockFprog(ctypes.Structure):
    """A BPF program (`struct sock_fprog`)."""

    _fields_ = [
        ("len", ctypes.c_ushort),
        ("filter", ctypes.POINTER(SockFilter)),
    ]


@functools.cache
def c_library() -> ctypes.CDLL:
    """The C library, loaded once (by the worker, before it forks)."""
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def exec_filter() -> SockFprog | None:
    """The seccomp program `deny_exec` installs, built once (by the worker, before it forks);
    None where this machine's system call numbers are not known here."""
    numbers = SYSCALLS.get(platform.machine())
    if numbers is None:
        return None
    arch, execve, execveat, clone, clone3 = numbers
    denied, absent = SECCOMP_RET_ERRNO | errno.EPERM, SECCOMP_RET_ERRNO | errno.ENOSYS
    program = [
        (BPF_LD_W_ABS, 0, 0, 4),  # 0: seccomp_data.arch
        (BPF_JEQ_K, 0, 11, arch),  # 1: another ABI (x86's 32-bit one): 13
        (BPF_LD_W_ABS, 0, 0, 0),  # 2: seccomp_data.nr
        (BPF_JEQ_K, 9, 0, execve),  # 3: 13
        (BPF_JEQ_K, 8, 0, execveat),  # 4: 13
        (BPF_JEQ_K, 6, 0, clone3),  # 5: 12
        (BPF_JEQ_K, 2, 0, clone),  # 6: 9
        (BPF_JGE_K, 5, 0, X32_SYSCALL_BIT),  # 7: x32's numbers, on x86-64: 13
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),  # 8
        (BPF_LD_W_ABS, 0, 0, 16),  # 9: the low half of clone's flags
        (BPF_JSET_K, 2, 0, CLONE_THREAD),  # 10: 13
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),  # 11
        (BPF_RET_K, 0, 0, absent),  # 12
        (BPF_RET_K, 0, 0, denied),  # 13
    ]
    filters = (SockFilter * len(program))(*(SockFilter(*line) for line in program))
    return SockFprog(len(program), filters)


def deny_exec() -> bool:
    """Make this process and its descendants unable to run another program (`execve`,
    `execveat`) or start a thread (`clone` of a thread; `clone3`, which the C library then
    replaces with `clone`), with a seccomp filter the kernel enforces and nothing in the process
    can remove: a program started afresh would run without the policy guard, a thread unseen
    by the operation counter. Forking still works. False where this machine's system call
    numbers are not known here."""
    fprog = exec_filter()
    if fprog is None:
        return False
    if c_library().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if c_library().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
    return True


def protect_worker() -> None:
    """Make this process undumpable, so that no child can open its /proc files (its memory, the
    result pipe among its descriptors) or ptrace it, and the reaper of every orphan below it."""
    libc = c_library()
    for option, value in ((PR_SET_DUMPABLE, 0), (PR_SET_CHILD_SUBREAPER, 1)):
        if libc.prctl(option, value, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl({option}, {value}) failed")


OOM_COUNTERS = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")


def oom_kills() -> int | None:
    """How many processes the container's memory cgroup has killed so far, if it says."""
    for path in OOM_COUNTERS:
        with contextlib.suppress(OSError):
            for line in Path(path).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    return None


State = dict[str, Json]


def io_priority(value: int | None = None) -> int | None:
    """This process's I/O priority (`ioprio_get`), or set it to `value` (`ioprio_set`); None
    where this machine's system call numbers are not known here."""
    numbers = IOPRIO_SYSCALLS.get(platform.machine())
    if numbers is None:
        return None
    libc = c_library()
    if value is not None:
        libc.syscall(numbers[0], IOPRIO_WHO_PROCESS, 0, value)
        return value
    found = int(libc.syscall(numbers[1], IOPRIO_WHO_PROCESS, 0))
    return None if found < 0 else found


def own_state() -> State:
    """What another process of this uid could change about this one, and children inherit:
    its rlimits (prlimit), niceness, I/O priority, CPU affinity and scheduling; and its umask."""
    limits = {
        name: list(resource.getrlimit(getattr(resource, name)))
        for name in dir(resource)
        if name.startswith("RLIMIT_")
    }
    umask = os.umask(0o022)
    os.umask(umask)
    return {
        "rlimits": limits,
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "ioprio": io_priority(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "scheduler": os.sched_getscheduler(0),
        "priority": os.sched_getparam(0).sched_priority,
        "umask": umask,
    }


def cap_address_space(budget_mb: int) -> int:
    """Cap this process's address space (and its children's) at what it maps now, torch
    imported, plus `budget_mb`: the memory a submission's code may use. How much address space
    torch needs to start depends on its build and the machine's cores (a CUDA build on 16 cores
    maps several GB it never touches), so the cap is measured here, never a constant. Returns
    the cap in bytes."""
    mapped = 0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            mapped = int(line.split()[1]) << 10
    cap = mapped + (budget_mb << 20)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    return cap


def first_to_kill() -> None:
    """Make this process the first the kernel kills when its memory cgroup (a container's, or a
    local worker's) runs out, before the worker that serves the other problems."""
    with contextlib.suppress(OSError):
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        try:
            os.write(fd, b"1000")
        finally:
            os.close(fd)


BASELINE: State = {}
"""The worker's own state as it started, before any candidate code ran (`main` sets it)."""


def reset_inherited(baseline: State) -> None:
    """Set what this process inherited from the worker back to the worker's state at its start,
    wherever the kernel lets it: a process of the same uid may have changed the worker's own
    (the worker's check after each submission then retires its container)."""
    if not baseline:
        return
    os.umask(baseline["umask"])
    for name, (soft, hard) in baseline["rlimits"].items():
        with contextlib.suppress(ValueError, OSError):  # a lowered hard limit stays lowered
            resource.setrlimit(getattr(resource, name), (soft, hard))
    with contextlib.suppress(OSError):  # a raised niceness cannot be lowered without privilege
        os.setpriority(os.PRIO_PROCESS, 0, baseline["nice"])
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, baseline["affinity"])
    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, baseline["scheduler"], os.sched_param(baseline["priority"]))
    if baseline["ioprio"] is not None:
        io_priority(baseline["ioprio"])


def kill_all_others() -> dict[int, int]:
    """SIGKILL every other process of the container and reap them all: as PID 1 every orphan
    is this process's child, so none is left once it has no child. Returns pid -> wait status."""
    statuses: dict[int, int] = {}
    while True:
        with contextlib.suppress(ProcessLookupError):  # no process left to signal
            os.kill(-1, signal.SIGKILL)
        try:
            while (reaped := os.waitpid(-1, os.WNOHANG))[0]:
                statuses[reaped[0]] = reaped[1]
        except ChildProcessError:
            return statuses
        time.sleep(0.001)
