"""A batch's secret: with its seed, what its inputs are drawn from.

A seed alone is no key: a fixed one (`--seed 1` in a course's CI) lets anyone draw the inputs
and hand in a table of their outputs instead of code. So a batch's inputs are drawn from its
seed and a secret (`grader.verdict.plan.draw`) that the grading person gives (`--secret-file`,
or `GRADER_SECRET`), or that the batch makes and keeps in its out folder, readable by its owner
alone, so that `--resume` and a regrade into that folder draw the same inputs. The folder also
records a digest of the secret, which tells nothing of it, and `--resume` refuses another
secret, as it refuses another seed. The secret stays on the host: the worker is sent the drawn
tensors only.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

from grader.errors import GraderError
from grader.names import GRADER_OWNED

ENV_SECRET = "GRADER_SECRET"
SECRET_FILE = f"{GRADER_OWNED}-secret"
"""Where a batch keeps the secret it made, beside its reports (named as no report can be)."""
ID_FILE = f"{GRADER_OWNED}-secret-id"
"""Where a batch records its secret's digest (`secret_id`), whoever gave the secret."""
MIN_BYTES = 16
MAKE = "python3 -c 'import secrets; print(secrets.token_hex(32))'"


def given_secret(file: Path | None) -> bytes | None:
    """The secret the grading person gives: the content of `file`, else of `GRADER_SECRET`
    (set, even empty, it is the secret), surrounding white space left out; None when neither.
    One under `MIN_BYTES` is refused: a short secret can be guessed."""
    if file is not None:
        try:
            value, origin = file.read_bytes(), f"--secret-file {file}"
        except OSError as exc:
            raise GraderError(f"--secret-file {file}: {exc.strerror or exc}") from exc
    elif ENV_SECRET in os.environ:
        value, origin = os.environ[ENV_SECRET].encode(), ENV_SECRET
    else:
        return None
    return checked(value.strip(), origin)


def checked(secret: bytes, origin: str) -> bytes:
    if len(secret) < MIN_BYTES:
        raise GraderError(
            f"{origin}: a secret of {len(secret)} byte(s): give at least {MIN_BYTES} "
            f"(`{MAKE}` makes one)"
        )
    return secret


def kept_secret(out_dir: Path) -> Path:
    """Where the batch graded into `out_dir` keeps the secret it made."""
    return out_dir / SECRET_FILE


def secret_id(secret: bytes) -> str:
    """A digest that tells two secrets apart, and nothing of either."""
    return hashlib.sha256(b"attention-grader secret id\0" + secret).hexdigest()[:16]


def batch_secret(out_dir: Path, given: bytes | None, resume: bool) -> tuple[bytes, bool]:
    """The secret of the batch graded into `out_dir`, and whether it is new: `given`, else the
    one kept in `out_dir`, else a new one, for `keep_secret` to keep there once the batch is
    ready to grade (nothing is written before). Resuming, one other than the saved batch's is
    refused."""
    path = kept_secret(out_dir)
    try:
        if given is not None:
            secret, new = given, False
        else:
            secret, new = checked(path.read_bytes().strip(), str(path)), False
    except FileNotFoundError:
        secret, new = secrets.token_hex(32).encode(), True
    except OSError as exc:
        raise GraderError(f"cannot read the batch's secret {path}: {exc.strerror or exc}") from exc
    if resume and recorded_id(out_dir) not in (None, secret_id(secret)):
        raise GraderError(
            f"the reports in {out_dir} were graded with another secret: resume with that one "
            f"(--secret-file or {ENV_SECRET}), or grade into another --out folder"
        )
    return secret, new


def recorded_id(out_dir: Path) -> str | None:
    try:
        return (out_dir / ID_FILE).read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None


def keep_secret(out_dir: Path, secret: bytes, new: bool) -> Path | None:
    """Record the batch's secret in `out_dir`: its digest, and a `new` one itself, readable by
    its owner alone (mode 0600); where that is, when it was kept."""
    path = kept_secret(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / ID_FILE).write_text(secret_id(secret) + "\n", encoding="ascii")
        if not new:
            return None
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise GraderError(f"cannot keep the batch's secret in {out_dir}: {exc}") from exc
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(secret + b"\n")
    return path
