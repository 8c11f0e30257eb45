"""Grading a batch: each submission's report saved as it is done, resumed, sharded, stopped
cleanly by Ctrl-C; the reports in input order."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from grader.errors import GraderError
from grader.names import submission_name
from grader.platforms.exports import open_export
from grader.reports.models import (
    ProblemReport,
    ProblemStatus,
    Student,
    SubmissionReport,
    write_report,
)
from grader.reports.text import fraction
from grader.resume import batch_seed, check_problems, saved_report, stale_warning
from grader.sandboxing.backends.base import (
    Backend,
    BackendName,
    Isolation,
    LimitOverrides,
    batch_limits,
)
from grader.sandboxing.backends.select import make_backend
from grader.secret import batch_secret, keep_secret
from grader.shards import Shard, sliced

if TYPE_CHECKING:
    from grader.courses.catalog import Catalog
    from grader.grade import Grader

Advance = Callable[[str], None]
"""Told the name and score of each submission as it is graded."""


@contextmanager
def no_progress(total: int) -> Iterator[Advance]:
    yield lambda _line: None


@dataclass(frozen=True)
class Listener:
    """Where a batch tells what it does: `note` for status lines, `warn` for what it left out,
    `progress(total)` for a context that is advanced once per graded submission, `wrote` for
    each output file."""

    note: Callable[[str], None] = lambda _line: None
    warn: Callable[[str], None] = lambda _line: None
    progress: Callable[[int], AbstractContextManager[Advance]] = no_progress
    wrote: Callable[[str], None] = lambda _path: None  # each output file written


JOBS = os.cpu_count() or 1
"""Submissions graded (or solutions proved) at once by default: one per core."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    """How a batch is graded: where the code runs, how many at once, with which seed and
    secret."""

    backend: BackendName = BackendName.docker
    image: str | None = None
    jobs: int = JOBS
    seed: int | None = None  # None: a random seed (or, resuming, the saved batch's)
    secret: bytes | None = None  # None: the one kept in the out folder, made there if need be
    limits: LimitOverrides = field(default_factory=LimitOverrides)
    resume: bool = False  # reuse saved reports that are still valid
    shard: Shard | None = None  # grade only this slice of the batch (needs a seed)
    isolation: Isolation = Isolation.warm  # docker: warm workers, or a `container` each


def grade_path(
    catalog: Catalog,
    path: Path,
    out_dir: Path,
    settings: Settings,
    problems: Sequence[str] = (),
    listener: Listener = Listener(),
    checked: Callable[[], Catalog] | None = None,
) -> list[SubmissionReport]:
    """Grade what `path` holds (a submission, a folder or zip of them, a Gradescope export, a
    folder of Classroom clones) and save each report in `out_dir`, in input order (`checked`:
    as in `grade_batch`)."""
    catalog.select(list(problems))  # an unknown problem is refused before anything is read
    with open_export(path, catalog) as export:
        for reason in export.skipped:
            listener.warn(f"Skipped {reason}")
        for note in export.notes:
            listener.warn(note)
        found = len(export.submissions)
        listener.note(f"Reading {export.layout}: {found} submission(s)")
        if not export.submissions:
            raise GraderError(f"no submissions in {path}")
        students = {s.path: s.student for s in export.submissions if s.student is not None}
        submissions = [s.path for s in export.submissions]
        shard = settings.shard
        if shard is not None:
            submissions = sliced(submissions, shard, settings.seed, settings.secret, out_dir)
            listener.note(f"Shard {shard.index}/{shard.count}: {len(submissions)} submission(s)")
        return grade_batch(
            catalog, submissions, out_dir, settings, problems, students, listener, checked
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
    checked: Callable[[], Catalog] | None = None,
) -> list[SubmissionReport]:
    """Grade submission folders and save each report in `out_dir` as it is done; the reports
    in input order. Resuming, the still valid saved reports are returned as they are. The
    inputs are drawn from the seed and the batch's secret (`batch_secret`), but a kit's: it
    judges on the inputs it recorded.

    The workers start first, then `checked` loads the course bound to its checks (which imports
    torch; None: `catalog` is bound already) and the references run, while the workers import
    torch too: the first submission goes out once both sides are ready."""
    if settings.backend is BackendName.fork:
        raise GraderError("the fork backend is for checking one's own code: grade on docker")
    selected = catalog.select(list(problems))
    seed, saved = kit_seed(catalog, settings.seed), {}
    if settings.resume:
        seed = batch_seed(list(submissions), out_dir, seed)
        ids = [p.spec.id for p in selected]
        check_problems(list(submissions), out_dir, ids)
        for submission in submissions:
            report = saved_report(submission, out_dir, ids, catalog.entries)
            if report is not None:
                saved[submission] = report
        listener.note(f"Resuming: {len(saved)} submission(s) already graded")
    stale = stale_warning((submission_name(s) for s in submissions), out_dir, "this batch")
    if stale is not None:
        listener.warn(stale)
    todo = [s for s in submissions if s not in saved]
    if todo:
        ready = batch_limits([p.spec.limits for p in selected], settings.limits)
        workers = min(settings.jobs, len(todo))
        secret, new = None, False
        if not catalog.is_kit:
            secret, new = batch_secret(out_dir, settings.secret, settings.resume)
        backend = make_backend(settings.backend, settings.image, settings.isolation, ready, workers)
        written: dict[int, SubmissionReport] = {}  # by the graded report's id: the saved one
        try:
            grader = bound_grader(
                catalog, checked, problems, backend, seed, settings.limits, secret
            )
            with grader:
                where = keep_secret(out_dir, secret, new) if secret is not None else None
                if where is not None:  # kept once the batch can be graded
                    listener.note(f"Made the secret of this batch's inputs: {where}")
                on = f"on {backend.name}, seed {grader.seed}"
                listener.note(f"Grading {len(todo)} submission(s) {on}")
                with listener.progress(len(todo)) as advance:

                    def done(report: SubmissionReport) -> None:
                        written[id(report)] = stored = save_report(report, out_dir)
                        advance(f"{stored.submission} {fraction(stored.total, stored.max_total)}")

                    graded = grader.grade_many(todo, settings.jobs, done, students)
                    fresh = [written[id(r)] for r in graded]
        except (KeyboardInterrupt, SystemExit) as stop:
            code = 130 if isinstance(stop, KeyboardInterrupt) else stop.code
            kept = len(saved) + len(written)
            raise Interrupted(kept, len(todo) - len(written), out_dir, int(code or 1)) from stop
        saved.update(zip(todo, fresh, strict=True))
    return [saved[s] for s in submissions]


def bound_grader(
    catalog: Catalog,
    checked: Callable[[], Catalog] | None,
    problems: Sequence[str],
    backend: Backend,
    seed: int | None,
    limits: LimitOverrides,
    secret: bytes | None,
) -> Grader:
    """The batch's grader, on the course bound to its checks (its references run); the backend
    is closed if it cannot be made."""
    try:
        from grader.grade import Grader
        from grader.verdict.plan import draw_seed

        bound = catalog if checked is None else checked()
        selected = bound.select(list(problems))
        return Grader(bound, selected, backend, draw_seed(seed), limits, secret)
    except BaseException:
        backend.close()
        raise


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


def kit_seed(catalog: Catalog, seed: int | None) -> int | None:
    """A candidate kit judges on the inputs it recorded, drawn with its own seed."""
    return catalog.seed if catalog.is_kit else seed
