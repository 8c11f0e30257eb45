"""A memory cgroup for each local worker, where this machine lets the grader make one.

Running as root (Gradescope, Classroom 50) or in a delegated cgroup, the grader makes a group
below its own in the memory hierarchy (cgroup v2's `memory.max`, or v1's
`memory.limit_in_bytes`), with no swap, and `launch.py` moves the worker into it before the
worker's first instruction: the worker and every process it starts then share `--memory-mb`
of memory (resident pages, as a container's limit counts them), however much address space
torch's build maps. What the kernel's OOM killer did there is read by the host from the
group's own counters, never reported by the worker. A group is removed with its worker, every
process still in it killed first. Where no group can be made, the worker caps its own address
space instead (`--memory-mb` passed to it)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PROC_CGROUP = Path("/proc/self/cgroup")
MOUNTINFO = Path("/proc/self/mountinfo")
REMOVE_SECONDS = 5.0
PREFIX = "attention-grader-"  # a group's name: this prefix, the grader's pid and a count


@dataclass(frozen=True)
class Hierarchy:
    """Where this process's memory cgroup is, and which interface its files speak."""

    folder: Path  # this process's own group
    version: int  # 2: memory.max, memory.events; 1: memory.limit_in_bytes, memory.oom_control

    def limit_files(self, limit: int) -> list[tuple[str, str]]:
        """The files that set a group's memory limit to `limit` bytes and its swap to none, in
        the order the kernel accepts them."""
        if self.version == 2:
            return [("memory.max", str(limit)), ("memory.swap.max", "0")]
        return [("memory.limit_in_bytes", str(limit)), ("memory.memsw.limit_in_bytes", str(limit))]


def mounts() -> dict[str, tuple[Path, str]]:
    """cgroup mounts by kind (`cgroup2`, or v1's `memory`): mount point and the root inside the
    hierarchy it shows."""
    found: dict[str, tuple[Path, str]] = {}
    for line in MOUNTINFO.read_text().splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        after = line.split(" - ", 1)[1].split()
        if len(after) < 3:
            continue
        kind, options = after[0], after[2].split(",")
        if kind == "cgroup2":
            found.setdefault("cgroup2", (Path(fields[4]), fields[3]))
        elif kind == "cgroup" and "memory" in options:
            found.setdefault("memory", (Path(fields[4]), fields[3]))
    return found


def own_hierarchy() -> Hierarchy | None:
    """This process's memory cgroup: v1's memory controller where it is mounted, else the v2
    group if memory is among its controllers; None where neither is."""
    try:
        mounted = mounts()
        lines = PROC_CGROUP.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        kind = "cgroup2" if controllers == "" else "memory"
        if kind == "memory" and "memory" not in controllers.split(","):
            continue
        if kind not in mounted:
            continue
        mount, root = mounted[kind]
        relative = os.path.relpath(path, root) if path.startswith(root) else None
        if relative is None or relative.startswith(".."):
            continue
        folder = (mount / relative).resolve()
        if kind == "memory":
            return Hierarchy(folder, 1)
        if v2_memory(folder):
            return Hierarchy(folder, 2)
    return None


def v2_memory(folder: Path) -> bool:
    """Whether groups made in `folder` get the memory controller (enabling it for them if it
    may be enabled)."""
    try:
        if "memory" in (folder / "cgroup.subtree_control").read_text().split():
            return True
        if "memory" not in (folder / "cgroup.controllers").read_text().split():
            return False
        (folder / "cgroup.subtree_control").write_text("+memory")  # refused beside processes
        return True
    except OSError:
        return False


@dataclass(frozen=True)
class MemoryGroup:
    """One worker's group: its limit set, empty until `launch.py` moves the worker in."""

    folder: Path
    version: int

    @property
    def procs(self) -> Path:
        return self.folder / "cgroup.procs"

    def oom_kills(self) -> int:
        """Processes the kernel killed here for memory (0 where the group does not count them)."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        with contextlib.suppress(OSError, ValueError):
            for line in (self.folder / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def remove(self) -> None:
        """Kill every process left in the group and remove it."""
        deadline = time.monotonic() + REMOVE_SECONDS
        while time.monotonic() < deadline:
            try:
                pids = [int(p) for p in self.procs.read_text().split()]
            except (OSError, ValueError):
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            try:
                self.folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:  # its processes not reaped yet
                time.sleep(0.01)


class MemoryGroups:
    """Makes workers' memory groups below this process's own, if this machine lets it."""

    def __init__(self, hierarchy: Hierarchy) -> None:
        self.hierarchy = hierarchy
        self.count = 0

    @classmethod
    def here(cls) -> MemoryGroups | None:
        """Groups made where this process may make them, tried once; None where it may not.
        Groups a grader that was killed left behind are removed first."""
        hierarchy = own_hierarchy()
        if hierarchy is None:
            return None
        groups = cls(hierarchy)
        groups.remove_abandoned()
        trial = groups.make(64 << 20)
        if trial is None:
            return None
        trial.remove()
        return groups

    def remove_abandoned(self) -> None:
        """Remove the groups of graders no longer running (killed before they removed them)."""
        with contextlib.suppress(OSError):
            for folder in self.hierarchy.folder.glob(f"{PREFIX}*-*"):
                owner = folder.name.removeprefix(PREFIX).partition("-")[0]
                if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                    MemoryGroup(folder, self.hierarchy.version).remove()

    def make(self, limit: int) -> MemoryGroup | None:
        """A new group holding at most `limit` bytes of memory, or None if it cannot be made."""
        self.count += 1
        folder = self.hierarchy.folder / f"{PREFIX}{os.getpid()}-{self.count}"
        try:
            folder.mkdir()
        except OSError:
            return None
        group = MemoryGroup(folder, self.hierarchy.version)
        try:
            for name, value in self.hierarchy.limit_files(limit):
                path = folder / name
                swap = name.endswith("swap.max") or name.startswith("memory.memsw")
                if swap and not path.exists():  # swap not accounted here: none to limit
                    continue
                path.write_text(value)
        except OSError:
            group.remove()
            return None
        return group
