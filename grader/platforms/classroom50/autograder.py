"""Classroom 50: an assignment's `autograder.py`, the candidate kit beside it, and its runtime.

Classroom 50's runner fetches `<classroom>/autograders/<slug>/` from the teacher's Pages site
and runs `autograder.py` in the student's checkout, once per submission. The script installs
torch (CPU wheels) and the grader into a virtualenv, runs `grader classroom50 run` on the
checkout with the kit's visible checks, and copies `result.json` and `release-body.md` into the
checkout. The folder is published on Pages, so it holds the kit only: no hidden check, no
reference solution.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from grader.errors import GraderError
from grader.platforms.classroom.workflow import TORCH, TORCH_INDEX

AUTOGRADER = "autograder.py"
KIT = "kit"
RUNTIME = "runtime.json"
ACCOUNT = "grader-student"
SCRIPT = '''\
"""Classroom 50 autograder (written by `grader classroom50 init`): attention-grader on the
student's checkout, with the visible checks of the candidate kit in kit/ beside this file.

The runner starts it in the checkout. It installs torch (CPU) and the grader in a virtualenv,
or uses $GRADER_PYTHON (a Python with the grader installed, e.g. on a self-hosted runner),
grades the checkout with the local backend and leaves result.json and release-body.md there.
Where the job may become root (as root, or sudo without a password) the candidate's code runs
as the account $GRADER_ACCOUNT (default __ACCOUNT__, made if need be; empty: this job's
user); otherwise as this job's user, which is no sandbox: the log says which.
Exit 0 once result.json is written (a grader fault is status=error in it), 1 otherwise.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
KIT = HERE / "__KIT__"
GRADER = __GRADER__
TORCH = __TORCH__
TORCH_INDEX = __TORCH_INDEX__
ACCOUNT = os.environ.get("GRADER_ACCOUNT", "__ACCOUNT__")
OUTPUTS = ("result.json", "release-body.md")
# What the grader reads of the runner's environment (sudo starts it with a clean one).
PASSED = ("CLASSROOM", "ASSIGNMENT", "ASSIGNMENT_TYPE", "SUBMISSION_TAG", "COMMIT_URL",
          "RELEASE_URL", "REVIEW_URL", "OWNER", "USERNAME", "GITHUB_OUTPUT")
CLI = "from grader.cli.main import main; main()"


def log(line):
    print(f"autograder: {line}", flush=True)


def as_root():
    """The prefix that runs a command as root: none as root, sudo where it needs no password;
    None where the job cannot become root."""
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo"):
        probe = subprocess.run(["sudo", "-n", "true"], capture_output=True, check=False)
        if probe.returncode == 0:
            return ["sudo", "-n"]
    return None


def account(root):
    """The account the candidate's code runs as, made if need be; None: this job's user."""
    if root is None or not ACCOUNT:
        return None
    if subprocess.run(["id", "-u", ACCOUNT], capture_output=True, check=False).returncode:
        subprocess.run([*root, "useradd", "--system", "--user-group", "--no-create-home",
                        "--shell", "/usr/sbin/nologin", ACCOUNT], check=True)
    return ACCOUNT


def install(root, scratch):
    """A Python with the grader: $GRADER_PYTHON, or a new virtualenv with torch and the grader
    (root's, outside the job's home, when the candidate's code runs as another account)."""
    given = os.environ.get("GRADER_PYTHON")
    if given:
        if not (os.path.isfile(given) and os.access(given, os.X_OK)):
            raise OSError(f"GRADER_PYTHON={given} is not a Python this job can run")
        return given
    prefix = root if root is not None else []
    venv = Path("/opt/attention-grader") if root is not None else scratch / "venv"
    subprocess.run([*prefix, sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [*prefix, str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
           "--disable-pip-version-check"]
    subprocess.run([*pip, TORCH, "--index-url", TORCH_INDEX], check=True)
    subprocess.run([*pip, GRADER], check=True)
    return str(venv / "bin" / "python")


def grade(python, root, user, checkout, out):
    """`grader classroom50 run` on the checkout; its exit code."""
    command = [python, "-I", "-c", CLI, "classroom50", "run", str(checkout),
               "--course", str(KIT), "--out", str(out)]
    if user is not None:
        command += ["--user", user]
        if root:
            passed = [f"{k}={os.environ[k]}" for k in PASSED if k in os.environ]
            command = [*root, "env", *passed, *command]
    return subprocess.run(command, cwd=out.parent, check=False).returncode


def clear(path):
    """Remove what the checkout holds at `path`: a file, a link (never followed), a folder."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def main():
    checkout = Path.cwd()
    temp = os.environ.get("RUNNER_TEMP") or None
    scratch = Path(tempfile.mkdtemp(prefix="attention-grader-", dir=temp))
    root = as_root()
    user = account(root)
    if user is None:
        log("the candidate's code runs as this job's own user, with rlimits: no sandbox")
    else:
        log(f"the candidate's code runs as the account {user}, with rlimits")
    try:
        python = install(root, scratch)
    except (OSError, subprocess.CalledProcessError) as exc:
        log(f"installing the grader failed: {exc}")
        return 1
    out = scratch / "out"
    code = grade(python, root, user, checkout, out)
    written = out / "classroom50"
    if not (written / OUTPUTS[0]).is_file():
        log(f"the grader wrote no result (exit {code}): see its output above")
        return 1
    for name in OUTPUTS:
        clear(checkout / name)
        with open(checkout / name, "xb") as target:  # a new file: no link is followed
            target.write((written / name).read_bytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def requirement(grader_url: str, ref: str | None) -> str:
    """What pip installs the grader from: the Git repository at `ref` (default: its HEAD)."""
    return f"attention-grader @ git+{grader_url}" + (f"@{ref}" if ref else "")


def autograder_script(grader: str) -> str:
    """`autograder.py`, installing the grader from the pip requirement `grader`."""
    values = {
        "__GRADER__": repr(grader),
        "__TORCH__": repr(TORCH),
        "__TORCH_INDEX__": repr(TORCH_INDEX),
        "__ACCOUNT__": ACCOUNT,
        "__KIT__": KIT,
    }
    script = SCRIPT
    for marker, value in values.items():
        script = script.replace(marker, value)
    return script


def runtime_block(python: str) -> dict[str, Any]:
    """The assignment's `runtime` for `gh teacher assignment add --runtime`: a hosted Ubuntu
    runner (passwordless sudo: the candidate's code runs as its own account) and Python."""
    return {"runs-on": "ubuntu-latest", "python": python}


SLUG = re.compile(r"[a-z0-9][a-z0-9-]{1,38}")
"""An assignment's slug, as Classroom 50's assignments schema allows it."""
PYTHON = re.compile(r"3\.\d{1,2}")


def prepare_folder(folder: Path, force: bool, python: str) -> None:
    """Make the assignment's folder ready for a new autograder: refused where one is, unless
    `force` (then its autograder.py, kit and runtime.json go), or where Classroom 50 would not
    take its name (the slug) or the runtime's Python."""
    if not SLUG.fullmatch(folder.name):
        raise GraderError(
            f"{folder.name!r} is not an assignment slug Classroom 50 takes (lower-case letters, "
            "digits and '-', 2 to 39 characters): give <classroom>/autograders/<slug>"
        )
    if not PYTHON.fullmatch(python):
        raise GraderError(f"--python {python!r}: give a version such as 3.11")
    if folder.exists() and not folder.is_dir():
        raise GraderError(f"{folder} is not a folder: give <classroom>/autograders/<slug>")
    if (folder / AUTOGRADER).exists() and not force:
        raise GraderError(f"{folder / AUTOGRADER} exists (use --force to replace it)")
    if (folder / KIT).exists() and not force:
        raise GraderError(f"{folder / KIT} exists (use --force to replace it)")
    if force:
        shutil.rmtree(folder / KIT, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)


def write_autograder(folder: Path, grader: str, python: str) -> tuple[Path, Path]:
    """Write `autograder.py` and `runtime.json` into the assignment's folder."""
    script, runtime = folder / AUTOGRADER, folder / RUNTIME
    script.write_text(autograder_script(grader), encoding="utf-8")
    runtime.write_text(json.dumps(runtime_block(python), indent=2) + "\n", encoding="utf-8")
    return script, runtime
