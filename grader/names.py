"""Names: a submission's name as text, and the file names the grader gives its reports.

A submission's name is the candidate's (a folder's or a zip's name): it is shown as it is, but
never used as a file name. Each file of a submission in a report folder is named after its
slug: safe characters only, at most `MAX_SLUG_BYTES`, the name itself when it is already such
a name, else a cleaned prefix and a hash of the whole name. A kept name never holds `--` and a
hashed slug always does, so two names never share a slug. Files the grader owns in a report
folder beside the reports start with `grader` (`grader-shard.json`), which no slug does.
Every layer may import this module.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import unicodedata
from pathlib import Path

MAX_SLUG_BYTES = 80
HASH_CHARS = 16
GRADER_OWNED = "grader"
"""The prefix of every file the grader owns beside the reports; never a slug's (any case)."""
REPORT_SUFFIX = ".json"

KEPT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def as_text(name: str) -> str:
    """`name` as valid Unicode: the bytes of a file name that are not UTF-8 (which Python
    holds as lone surrogates) become `\\xNN` escapes."""
    try:
        raw = name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        return name.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def reading(name: str) -> str:
    """What a submission's name reads as: its text (`as_text`) in one Unicode form (NFC) and
    one case. Two names that read alike show as one in every output (`Zoë` as one code point
    and as `o` with a combining diaeresis), or name one report file where the file system
    ignores case (`Alice.json`, `alice.json`): never both graded."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", as_text(name)).casefold())


def canonical(name: str) -> bool:
    """Whether `name` is its own text in NFC: of names that read alike, the one that keeps it."""
    return as_text(name) == name and unicodedata.is_normalized("NFC", name)


def submission_name(path: Path) -> str:
    """The name of the submission at `path` (its folder's, as given: a link's own, `.`
    resolved), as text."""
    name = path.name
    if name in ("", ".", ".."):
        with contextlib.suppress(OSError, RuntimeError):  # a link loop: as given
            name = path.resolve().name
    return as_text(name)


def kept(name: str) -> bool:
    """Whether `name` is its own slug."""
    return (
        KEPT.fullmatch(name) is not None
        and len(name) <= MAX_SLUG_BYTES
        and "--" not in name
        and not name.lower().startswith(GRADER_OWNED)
    )


def slug(name: str) -> str:
    """The file name stem of a submission's files: `name` itself when it is safe, else its
    safe characters (at most a prefix of them) and a hash of the whole name."""
    if kept(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    prefix = UNSAFE.sub("_", name).lstrip("._-")[: MAX_SLUG_BYTES - HASH_CHARS - 4]
    if not prefix or prefix.lower().startswith(GRADER_OWNED):
        prefix = f"s-{prefix}" if prefix else "s"
    return f"{prefix.rstrip('.')}--{digest}"


def report_file(name: str) -> str:
    """The file name of the JSON report of the submission `name`."""
    return slug(name) + REPORT_SUFFIX


def grader_owned(path: Path) -> bool:
    """Whether a file of a report folder is the grader's own rather than a report."""
    return path.name.lower().startswith(GRADER_OWNED)


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a submission's name (what a report read back says it is), or None:
    a folder's or a zip's name is never empty, `.` or `..`, holds no `/` and no NUL, and is
    text (`as_text`)."""
    if name in ("", ".", ".."):
        return "not a name"
    if "/" in name or "\0" in name:
        return "a path, not a name"
    if as_text(name) != name:
        return "not text"
    return None
