"""The library's front door: grade a batch, check one's own work, validate a course, render.

The CLI, the benchmark and the tests call these functions. None reads a global path: each
takes the `Catalog` it works on. Every failure of the grader raises a `GraderError`; a
candidate's mistake is a verdict in the returned reports, never an exception. What runs
tensors is imported by the functions that grade, so that rendering starts without torch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from grader.errors import GraderError
from grader.names import grader_owned, slug, submission_name
from grader.outputs import Options, read_reports, write_outputs
from grader.platforms.exports import open_export
from grader.reports.junit import SuiteBy
from grader.reports.models import (
    ProblemReport,
    ProblemStatus,
    Student,
    SubmissionReport,
    write_report,
)
from grader.reports.text import fraction
from grader.resume import batch_seed, check_problems, saved_report
from grader.sandboxing.backends.base import LimitOverrides, batch_limits
from grader.sandboxing.backends.select import make_backend
from grader.strict import Strict

if TYPE_CHECKING:
    from grader.courses.catalog import Catalog, Problem
    from grader.grade import Grader
    from grader.validate import Outcome

Advance = Callable[[str], None]
"""Told the name and score of each submission as it is graded."""


@contextmanager
def no_progress(total: int) -> Iterator[Advance]:
    yield lambda _line: None


@dataclass(frozen=True)
class Listener:
    """Where a batch tells what it does: `note` for status lines, `warn` for what it left out,
    `progress(total)` for a context that is advanced once per graded submission."""

    note: Callable[[str], None] = lambda _line: None
    warn: Callable[[str], None] = lambda _line: None
    progress: Callable[[int], AbstractContextManager[Advance]] = no_progress


@dataclass(frozen=True)
class Settings:
    """How a batch is graded: where the code runs, how many at once, with which seed."""

    backend: str = "docker"
    image: str | None = None
    jobs: int = 1
    seed: int | None = None  # None: a random seed (or, resuming, the saved batch's)
    limits: LimitOverrides = field(default_factory=LimitOverrides)
    resume: bool = False  # reuse saved reports that are still valid
    shard: Shard | None = None  # grade only this slice of the batch (needs a seed)
    isolation: str = "warm"  # docker: warm workers, or a fresh `container` per submission


@dataclass(frozen=True)
class Feedback:
    """`grader check`'s result: the candidate's view of their report, and per problem how many
    checks were not run and what they are worth."""

    view: SubmissionReport
    unseen: dict[str, tuple[int, float]]


def grader(
    catalog: Catalog,
    problems: Sequence[str] = (),
    backend: str = "docker",
    image: str | None = None,
    seed: int | None = None,
    limits: LimitOverrides | None = None,
) -> Grader:
    """A `Grader` of `problems` (a context manager), for grading submissions one by one."""
    from grader.grade import Grader
    from grader.verdict.plan import draw_seed

    selected = catalog.select(list(problems))
    return Grader(catalog, selected, make_backend(backend, image), draw_seed(seed), limits)


def grade_path(
    catalog: Catalog,
    path: Path,
    out_dir: Path,
    settings: Settings,
    problems: Sequence[str] = (),
    listener: Listener = Listener(),
) -> list[SubmissionReport]:
    """Grade what `path` holds (a submission, a folder or zip of them, a Gradescope export, a
    folder of Classroom clones) and save each report in `out_dir`, in input order."""
    catalog.select(list(problems))  # an unknown problem is refused before anything is read
    with open_export(path, catalog) as export:
        for reason in export.skipped:
            listener.warn(f"Skipped {reason}")
        found = len(export.submissions)
        listener.note(f"Reading {export.layout}: {found} submission(s)")
        if not export.submissions:
            raise GraderError(f"no submissions in {path}")
        students = {s.path: s.student for s in export.submissions if s.student is not None}
        submissions = [s.path for s in export.submissions]
        shard = settings.shard
        if shard is not None:
            if settings.seed is None:
                raise GraderError("--shard needs --seed: every shard must grade with one seed")
            submissions = [s for s in submissions if shard.holds(submission_name(s))]
            record = ShardRecord(
                index=shard.index,
                count=shard.count,
                seed=settings.seed,
                submissions=[submission_name(s) for s in submissions],
            )
            out_dir.mkdir(parents=True, exist_ok=True)  # an empty slice is a shard too
            (out_dir / SHARD_FILE).write_text(record.model_dump_json(indent=2) + "\n")
            listener.note(f"Shard {shard.index}/{shard.count}: {len(submissions)} submission(s)")
        return grade_batch(catalog, submissions, out_dir, settings, problems, students, listener)


@dataclass(frozen=True)
class Shard:
    """The `index`-th (from 1) of `count` stable slices of a batch: a submission's slice
    depends on its name alone, so every machine agrees whatever order it lists them in."""

    index: int
    count: int

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


def stale_warning(names: Iterable[str], out_dir: Path, batch: str) -> str | None:
    """A warning when `out_dir` holds reports of submissions other than these (`batch` says
    which they are), which its gradebook leaves out; None when it holds no other."""
    slugs = {slug(name) for name in names}
    saved = sorted(p.stem for p in out_dir.glob("*.json") if not grader_owned(p))
    stale = [stem for stem in saved if stem not in slugs]
    if not stale:
        return None
    return (
        f"{out_dir} also holds {len(stale)} report(s) of submissions not in {batch} "
        f"({', '.join(stale[:3])}{', ...' if len(stale) > 3 else ''}): its summary.csv "
        f"leaves them out, but `grader report {out_dir}` would include them"
    )


class Interrupted(GraderError):
    """A batch stopped by Ctrl-C or SIGTERM once its running submissions were killed: the
    reports written so far are kept, and `--resume` grades the rest with the same seed."""

    def __init__(self, kept: int, left: int, out_dir: Path, exit_code: int) -> None:
        self.kept, self.left, self.out_dir, self.exit_code = kept, left, out_dir, exit_code
        super().__init__(
            f"stopped: {kept} report(s) kept in {out_dir}, {left} submission(s) not graded"
        )


def grade_batch(
    catalog: Catalog,
    submissions: Sequence[Path],
    out_dir: Path,
    settings: Settings,
    problems: Sequence[str] = (),
    students: Mapping[Path, Student] | None = None,
    listener: Listener = Listener(),
) -> list[SubmissionReport]:
    """Grade submission folders and save each report in `out_dir` as it is done; the reports
    in input order. Resuming, the still valid saved reports are returned as they are."""
    selected = catalog.select(list(problems))
    seed, saved = kit_seed(catalog, settings.seed), {}
    if settings.resume:
        seed = batch_seed(list(submissions), out_dir, seed)
        ids = [p.spec.id for p in selected]
        check_problems(list(submissions), out_dir, ids)
        for submission in submissions:
            report = saved_report(submission, out_dir, ids)
            if report is not None:
                saved[submission] = report
        listener.note(f"Resuming: {len(saved)} submission(s) already graded")
    stale = stale_warning((submission_name(s) for s in submissions), out_dir, "this batch")
    if stale is not None:
        listener.warn(stale)
    todo = [s for s in submissions if s not in saved]
    if todo:
        from grader.grade import Grader
        from grader.verdict.plan import draw_seed

        backend = make_backend(settings.backend, settings.image, settings.isolation)
        run_seed = draw_seed(seed)
        listener.note(f"Grading {len(todo)} submission(s) on {backend.name}, seed {run_seed}")
        written: dict[int, SubmissionReport] = {}  # by the graded report's id: the saved one
        try:
            with (
                Grader(catalog, selected, backend, run_seed, settings.limits) as grader,
                listener.progress(len(todo)) as advance,
            ):

                def done(report: SubmissionReport) -> None:
                    written[id(report)] = stored = save_report(report, out_dir)
                    advance(f"{stored.submission} {fraction(stored.total, stored.max_total)}")

                fresh = [
                    written[id(r)] for r in grader.grade_many(todo, settings.jobs, done, students)
                ]
        except (KeyboardInterrupt, SystemExit) as stop:
            code = 130 if isinstance(stop, KeyboardInterrupt) else stop.code
            kept = len(saved) + len(written)
            raise Interrupted(kept, len(todo) - len(written), out_dir, int(code or 1)) from stop
        saved.update(zip(todo, fresh, strict=True))
    return [saved[s] for s in submissions]


def save_report(report: SubmissionReport, out_dir: Path) -> SubmissionReport:
    """Save `report` in `out_dir` and return it; when it cannot be saved, that submission's
    grader_error report is saved and returned instead. A `GraderError` when no report can be."""
    try:
        write_report(report, out_dir)
        return report
    except (OSError, ValueError) as exc:
        fault = unsaved(report, exc)
    try:
        write_report(fault, out_dir)
    except (OSError, ValueError) as exc:
        raise GraderError(f"cannot save reports in {out_dir}: {exc}") from exc
    return fault


def unsaved(report: SubmissionReport, exc: Exception) -> SubmissionReport:
    """The grader_error report of a submission whose report could not be saved."""
    message = f"grader error: its report could not be saved: {exc!r}"
    problems = [
        ProblemReport(
            problem=p.problem,
            title=p.title,
            status=ProblemStatus.grader_error,
            score=0,
            max_score=p.max_score,
            message=message,
        )
        for p in report.problems
    ]
    return report.model_copy(update={"problems": problems, "total": 0, "message": message})


def check(
    course: Path | None,
    path: Path,
    problems: Sequence[str] = (),
    backend: str = "local",
    seed: int | None = None,
    reveal: bool = False,
) -> Feedback:
    """A candidate's own check of `path` on the checks they may see (by default on every
    problem with a file there; `reveal`, or the course's due date past, adds the
    `after_due_date` ones). The worker starts first, from the course read without its checks
    (so the course is read twice): it imports torch while the host does."""
    from grader.courses.course import open_course
    from grader.courses.coursefile import reveal_after_due
    from grader.selfcheck import attempted, check_submission

    def chosen(catalog: Catalog) -> list[Problem]:
        return catalog.select(list(problems)) if problems else attempted(catalog, path)

    ahead = batch_limits([p.spec.limits for p in chosen(open_course(course, False).catalog)])
    started = make_backend(backend, isolation="container", ready=ahead)  # one: no pool
    try:
        # With its checks, the course imports torch (or says to install it), as the worker does.
        found = open_course(course)
        from grader.verdict.plan import draw_seed

        selected = chosen(found.catalog)
        seed = draw_seed(kit_seed(found.catalog, seed))
        shown = reveal_after_due(reveal, found.course)
        view, unseen = check_submission(path, found.catalog, selected, started, seed, shown)
    finally:
        started.close()  # the worker started ahead, if no job took it
    return Feedback(view, unseen)


def kit_seed(catalog: Catalog, seed: int | None) -> int | None:
    """A candidate kit judges on the inputs it recorded, drawn with its own seed."""
    return catalog.seed if catalog.is_kit else seed


def validate(
    catalog: Catalog,
    problems: Sequence[str] = (),
    backend: str = "local",
    seed: int = 0,
    jobs: int = 1,
) -> list[Outcome]:
    """Prove `problems`' checks: references pass, starters and mutants lose what they must."""
    from grader.validate import validate_problems

    selected = catalog.select(list(problems))
    return validate_problems(catalog, selected, make_backend(backend), seed, jobs)


def saved_reports(folder: Path) -> list[SubmissionReport]:
    """The submission reports saved in `folder`; a `GraderError` when there is none."""
    reports = read_reports(folder)
    if not reports:
        raise GraderError(f"no submission reports in {folder}")
    return reports


def merged_reports(folders: Sequence[Path], out_dir: Path) -> list[SubmissionReport]:
    """The reports of a batch's shards as one batch, by submission name, to be written in
    `out_dir`; refused when the shards were graded with different seeds or problems, share a
    submission, or include `out_dir`, and, for the folders of `grader grade --shard`, unless
    they are every shard, each with all its reports."""
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
    problems = {tuple((p.problem, p.max_score) for p in r.problems) for r in batch}
    if len(problems) > 1:
        raise GraderError("the shards were graded on different courses or problems")
    return [reports[name] for name in sorted(reports)]


def render(
    reports: list[SubmissionReport],
    formats: Sequence[str],
    out_dir: Path,
    reveal_after_due: bool = False,
    junit_by: SuiteBy = "submission",
    echo: Callable[[str], None] = print,
) -> list[str]:
    """Write the gradebook CSV and every other chosen format into `out_dir`; what was written.
    `echo` prints what a format writes to the terminal (the Classroom result line)."""
    options = Options(out_dir, reveal_after_due, junit_by, echo=echo)
    return write_outputs(reports, ["csv", *formats], options)
