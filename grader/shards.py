"""Sharding a batch across machines: `--shard K/N` grades the K-th of N stable slices, and
`grader report SHARD1 SHARD2 ... --out DIR` merges the slices' folders into one batch's.

A shard's output folder holds a record of its slice (`grader-shard.json`), so that a merge can
tell a missing or unfinished shard from an empty one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from grader.errors import GraderError
from grader.names import submission_name
from grader.outputs import read_reports
from grader.reports.models import SubmissionReport
from grader.secret import ENV_SECRET, recorded_id
from grader.strict import Strict


@dataclass(frozen=True)
class Shard:
    """The `index`-th (from 1) of `count` stable slices of a batch: a submission's slice
    depends on its name alone, so every machine agrees whatever order it lists them in."""

    index: int
    count: int

    @classmethod
    def parse(cls, value: str) -> Shard:
        """`2/3` -> Shard(2, 3): the second of three slices."""
        index, _, count = value.partition("/")
        if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
            raise ValueError(f"{value!r}: give K/N with 1 <= K <= N, e.g. 2/3")
        return cls(int(index), int(count))

    def holds(self, name: str) -> bool:
        digest = hashlib.sha256(name.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


SHARD_FILE = "grader-shard.json"
"""Beside the reports, named as no report can be (`grader.names`)."""


class ShardRecord(Strict):
    """A shard's output folder says which slice of which batch it holds and what it was given
    to grade, so that a merge can tell a missing or unfinished shard from an empty one."""

    index: int = Field(ge=1)
    count: int = Field(ge=1)
    seed: int
    submissions: list[str]


def read_shard(folder: Path) -> ShardRecord | None:
    """The folder's shard record; None when it holds none (not a shard's output)."""
    path = folder / SHARD_FILE
    if not path.is_file():
        return None
    try:
        return ShardRecord.model_validate_json(path.read_bytes())
    except ValueError as exc:
        raise GraderError(f"{path}: not a shard record ({exc})") from exc


def check_records(records: Mapping[Path, ShardRecord | None]) -> None:
    """Refuse a merge that is not every shard of one batch, from their records alone."""
    missing = [str(f) for f, r in records.items() if r is None]
    if missing:
        raise GraderError(f"not the output of `grader grade --shard`: {', '.join(missing)}")
    known = [r for r in records.values() if r is not None]
    seeds = sorted({r.seed for r in known})
    if len(seeds) > 1:
        raise GraderError(f"the shards were graded with different seeds: {seeds}")
    (count, *others) = sorted({r.count for r in known})
    if others:
        raise GraderError(f"shards of batches cut in {count} and {others[0]} slices")
    given = sorted(r.index for r in known)
    if len(set(given)) < len(given):
        raise GraderError(f"a shard given twice: {given}")
    absent = [f"{k}/{count}" for k in range(1, count + 1) if k not in given]
    if absent:
        raise GraderError(
            f"shard(s) {', '.join(absent)} missing: the gradebook would lack their submissions"
        )


def check_complete(records: Mapping[Path, ShardRecord], graded: Mapping[Path, set[str]]) -> None:
    """Refuse a merge of shards one of which lacks some of its reports."""
    for folder, record in records.items():
        lacking = set(record.submissions) - graded[folder]
        if lacking:
            raise GraderError(
                f"shard {record.index}/{record.count} ({folder}) lacks {len(lacking)} of its "
                f"{len(record.submissions)} reports: grade it again with --resume"
            )


def sliced(
    submissions: Sequence[Path],
    shard: Shard,
    seed: int | None,
    secret: bytes | None,
    out_dir: Path,
) -> list[Path]:
    """The submissions of `shard`'s slice, its record written in `out_dir` (an empty slice is
    a shard too); refused without a seed and a given secret, which every shard must share (a
    secret made in each shard's folder would draw other inputs in each)."""
    if seed is None:
        raise GraderError("--shard needs --seed: every shard must grade with one seed")
    if secret is None:
        raise GraderError(
            f"--shard needs a secret every shard shares: give it with --secret-file or {ENV_SECRET}"
        )
    chosen = [s for s in submissions if shard.holds(submission_name(s))]
    record = ShardRecord(
        index=shard.index,
        count=shard.count,
        seed=seed,
        submissions=[submission_name(s) for s in chosen],
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / SHARD_FILE).write_text(record.model_dump_json(indent=2) + "\n")
    return chosen


def merged_reports(folders: Sequence[Path], out_dir: Path) -> list[SubmissionReport]:
    """The reports of a batch's shards as one batch, by submission name, to be written in
    `out_dir`; refused when the shards were graded with different seeds, secrets or problems,
    share a submission, or include `out_dir`, and, for the folders of `grader grade --shard`,
    unless they are every shard, each with all its reports."""
    if any(f.resolve() == out_dir.resolve() for f in folders):
        raise GraderError(f"--out {out_dir} is one of the shards: merge into another folder")
    records = {folder: read_shard(folder) for folder in folders}
    if any(records.values()):
        check_records(records)
    reports: dict[str, SubmissionReport] = {}
    origin: dict[str, Path] = {}
    graded: dict[Path, set[str]] = {}
    for folder in folders:
        graded[folder] = set()
        for report in read_reports(folder):
            name = report.submission
            if name in reports:
                raise GraderError(f"{name} is in two shards: {origin[name]} and {folder}")
            reports[name], origin[name] = report, folder
            graded[folder].add(name)
    shards = {f: r for f, r in records.items() if r is not None}
    if shards:
        check_complete(shards, graded)
    batch = list(reports.values())
    if not batch:
        raise GraderError(f"no submission reports in {', '.join(map(str, folders))}")
    seeds = sorted({r.run.seed for r in batch})
    if len(seeds) > 1:
        raise GraderError(f"the shards were graded with different seeds: {seeds}")
    if len({recorded_id(folder) for folder in folders} - {None}) > 1:  # None: graded nothing
        raise GraderError("the shards were graded with different secrets: their inputs differ")
    problems = {tuple((p.problem, p.max_score) for p in r.problems) for r in batch}
    if len(problems) > 1:
        raise GraderError("the shards were graded on different courses or problems")
    return [reports[name] for name in sorted(reports)]
