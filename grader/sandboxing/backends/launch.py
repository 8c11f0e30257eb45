"""Start a command with its limits already in place, and clean up after an account.

`python -I -S launch.py run SETTINGS COMMAND...` sets the rlimits, drops to the account, then
execs COMMAND: nothing of it runs before both hold. SETTINGS is JSON: `rlimits` (a `resource`
constant's name to its value, soft and hard alike, never above the current hard limit),
`cgroup` (the `cgroup.procs` file of a group to join first, or null) and `uid`/`gid` (the
account to become, or null to stay).
`python -I -S launch.py sweep UID GID` becomes the account and kills every process it may
signal: all of the account's, also those that left the worker's process group.
Standard library only: it runs as a script, before the grader's environment exists.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import sys
from typing import Any


def apply_rlimits(rlimits: dict[str, int]) -> None:
    for name, value in rlimits.items():
        kind = getattr(resource, name)
        hard = resource.getrlimit(kind)[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))


def become(uid: int, gid: int) -> None:
    """Real, effective and saved ids, no supplementary groups (needs root)."""
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)


def run(settings: dict[str, Any], command: list[str]) -> None:
    if settings.get("cgroup"):
        with open(settings["cgroup"], "w") as procs:
            procs.write(str(os.getpid()))
    apply_rlimits(settings["rlimits"])
    uid, gid = settings["uid"], settings["gid"]
    if uid is not None:
        become(uid, gid)
    os.execv(command[0], command)


def sweep(uid: int, gid: int) -> None:
    become(uid, gid)
    with contextlib.suppress(ProcessLookupError):  # nothing left to kill
        os.kill(-1, signal.SIGKILL)  # every process this account may signal, but this one


def main(argv: list[str]) -> None:
    if argv[0] == "run":
        run(json.loads(argv[1]), argv[2:])
    elif argv[0] == "sweep":
        sweep(int(argv[1]), int(argv[2]))
    else:
        sys.exit(f"usage: launch.py run SETTINGS COMMAND... | sweep UID GID (not {argv[0]!r})")


if __name__ == "__main__":
    main(sys.argv[1:])
