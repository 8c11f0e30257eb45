"""Grading submissions: stage, run the worker through a backend, judge on the host, report."""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import shutil
import signal
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import datetime, timezone
from pathlib import Path

from grader import __version__
from grader.courses.catalog import Catalog, Problem
from grader.names import as_text, submission_name
from grader.reports.models import ProblemReport, ProblemStatus, RunInfo, Student, SubmissionReport
from grader.sandboxing import signals
from grader.sandboxing.backends.base import (
    Backend,
    BackendName,
    LimitOverrides,
    WorkerJob,
    WorkerRun,
    batch_limits,
)
from grader.sandboxing.claims import wanted
from grader.sandboxing.executor import PROTOCOL_VERSION
from grader.sandboxing.locate import locate
from grader.sandboxing.protocol import encode_job, problem_part, result_names
from grader.sandboxing.results import ProblemExit, ProblemRun, read_problem, read_worker_report
from grader.sandboxing.staging import Staged, display, stage_submission
from grader.sandboxing.untrusted import InvalidOutput
from grader.verdict.checks.scope import Sources
from grader.verdict.judge import judge_problem
from grader.verdict.near import missing_file, missing_in_notebook
from grader.verdict.prepare import Prepared, prepare
from sandbox.protocol import sealer


def scratch_root() -> str | None:
    """Where submissions are staged and their results extracted: a memory file system when the
    machine has one (hundreds of small files per submission: 30 times faster than ext4 here),
    else the default temporary folder."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


FILE_SYSTEM_LIMITS = {
    errno.ENAMETOOLONG: "a file name or path longer than the file system allows",
    errno.ELOOP: "more levels of symbolic links than the file system follows",
    errno.EILSEQ: "a file name the file system refuses",
}
"""What a candidate's files or names can break in the file system, by errno: a verdict."""


STOPPING_SECONDS = 3.0
"""Time a stopped batch waits for its running workers: none waits on the engine after a stop,
so only the host's own work on a submission (staging, judging) may take that long."""


START_LIMITS = (
    (("MemoryError", "cannot allocate memory", "bad_alloc", "Memory allocation"), "memory",
     "raise it with --memory-mb"),
    (("can't start new thread", "Resource temporarily unavailable"), "process count",
     "it counts every process of the account that runs the worker"),
)  # fmt: skip
"""What a worker's start can run out of, how its log says so, and what to do about it."""


def start_limit(run: WorkerRun, overrides: LimitOverrides, attempted: list[Problem]) -> str:
    """Which limit stopped a worker before any candidate code ran, and how to raise it: one
    clause, or nothing when its log names none."""
    limits = batch_limits([p.spec.limits for p in attempted], overrides)
    if run.exit_code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return f": its CPU limit ({limits.cpu_seconds} s) stopped it"
    for signs, limit, advice in START_LIMITS:
        if any(sign in run.stderr for sign in signs):
            size = f" ({limits.memory_mb} MB for the candidate's code)" if limit == "memory" else ""
            return f": its {limit} limit{size} stopped it: {advice}"
    return ""


class Grader:
    """Grades submissions against a set of problems; plans and references are built once.

    The inputs are drawn from `seed` and `secret` (`grader.verdict.plan.draw`); without a
    secret whoever knows the seed knows them, and can hand in their outputs instead of code.
    A context manager: leaving it removes its scratch folder. Building it raises
    `GraderFault` when a reference fails its own probes."""

    def __init__(
        self,
        catalog: Catalog,
        problems: list[Problem],
        backend: Backend,
        seed: int,
        limit_overrides: LimitOverrides | None = None,
        secret: bytes | None = None,
    ) -> None:
        self.problems = problems
        self.entries = catalog.entries  # the course's files
        self.backend = backend
        self.seed = seed
        self.overrides = limit_overrides or LimitOverrides()
        source = catalog.reference_source()
        self.prepared: dict[str, Prepared] = prepare(problems, seed, source, secret)
        self.parts = {
            pid: problem_part(
                pid,
                self.overrides.problem_seconds or item.problem.spec.limits.problem_seconds,
                item.plan.job(),
                item.plan.tensors,
            )
            for pid, item in self.prepared.items()
        }
        self.stop = threading.Event()
        self.slots = threading.BoundedSemaphore(1)
        self.environment = backend.describe()
        self.workdir = Path(tempfile.mkdtemp(prefix="grader-", dir=scratch_root()))
        self.kept: dict[Path, dict[str, tuple[ProblemRun, Sources]]] | None = None
        """Set to a dict to keep each submission's problem runs, as judged (`validate` weighs
        the probes with them)."""

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.backend.close()
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def grade(
        self, submission: Path, name: str | None = None, student: Student | None = None
    ) -> SubmissionReport:
        """Grade one submission: the problem files at its top, or in the one folder of it that
        holds some (`locate`). Whatever its files and its name, this returns its report: the
        limits it broke are noted in it, and any failure of ours makes it a grader_error."""
        slot = Slot(self.slots)
        started = datetime.now(timezone.utc)
        clock = time.monotonic()
        name = as_text(name) if name else submission_name(submission)
        scratch = self.workdir / uuid.uuid4().hex
        environment = dict(self.environment)
        try:
            problems, content_hash, message, run = self._grade(submission, scratch, slot)
            environment.update(run.environment if run is not None else {})
        except Exception as exc:  # this submission's report says what went wrong
            problems, message = self.failed(exc)
            content_hash = ""
        finally:
            slot.release()
            shutil.rmtree(scratch, ignore_errors=True)
        return SubmissionReport(
            submission=name,
            student=student,
            total=sum(p.score for p in problems),
            max_total=sum(p.max_score for p in problems),
            problems=problems,
            content_hash=content_hash,
            message=message,
            run=RunInfo(
                grader_version=__version__,
                seed=self.seed,
                backend=self.environment.get("backend", self.backend.name),
                environment=environment,
                isolation=self.backend.isolation,
                started_at=started,
                seconds=round(time.monotonic() - clock, 3),
            ),
        )

    def _grade(
        self, submission: Path, scratch: Path, slot: Slot
    ) -> tuple[list[ProblemReport], str, str, WorkerRun | None]:
        entries = {p.spec.entry: wanted(p.spec) for p in self.problems}
        located = locate(submission, self.entries)
        staged = stage_submission(located.folder, scratch / "submission", entries)
        attempted = [p for p in self.problems if (staged.path / p.spec.entry).is_file()]
        reports: dict[str, ProblemReport] = {}
        run = None
        if attempted:
            sources = Sources(staged.sources)
            scopes = {p.spec.id: [f.path for f in sources.scope(p.spec.entry)] for p in attempted}
            run = self.run_worker(attempted, staged.path, scratch, slot, scopes)
            reports = self.judge(attempted, run, scratch, sources, submission)
        problems = [reports.get(p.spec.id) or self.not_attempted(p, staged) for p in self.problems]
        notes = list(staged.notes)
        if run is not None and run.oom_killed:
            notes.append("the worker ran out of memory")
        if located.note:
            notes.append(located.note)
        return problems, staged.content_hash, "; ".join(notes), run

    def run_worker(
        self,
        attempted: list[Problem],
        staged: Path,
        scratch: Path,
        slot: Slot,
        scopes: dict[str, list[str]],
    ) -> WorkerRun:
        """Run the worker on the attempted problems, each allowed to run only its `scopes`
        (the files the host reads for it)."""
        ids = [p.spec.id for p in attempted]
        job = WorkerJob(
            submission_dir=staged,
            job=encode_job((self.parts[i] for i in ids), scopes, scratch.name),
            out_dir=scratch / "out",
            limits=batch_limits([p.spec.limits for p in attempted], self.overrides),
            outputs=result_names(ids),
            stop=self.stop,
        )
        try:
            return self.backend.run(job)
        finally:
            slot.release()  # judging this one overlaps the next one's run

    def judge(
        self,
        attempted: list[Problem],
        run: WorkerRun,
        scratch: Path,
        sources: Sources,
        submission: Path | None = None,
    ) -> dict[str, ProblemReport]:
        """Each attempted problem's report from what the run left in `scratch`/out, its records
        sealed for this run (named as `scratch` is) and no other; the runs kept in `kept` under
        `submission` when both are set."""
        out = scratch / "out"
        if run.fault is not None:
            return {p.spec.id: self.fault(p, f"sandbox failure: {run.fault}") for p in attempted}
        # a local or forked worker is this package's own: its worker.json tells nothing new
        docker = self.backend.name is BackendName.docker
        try:
            worker = read_worker_report(out) if docker else None
        except InvalidOutput:
            worker = None
        if worker is not None and worker.version != PROTOCOL_VERSION:
            message = f"the sandbox speaks protocol {worker.version}, the grader {PROTOCOL_VERSION}"
            return {p.spec.id: self.fault(p, f"{message}: rebuild the image") for p in attempted}
        runs = {
            p.spec.id: read_problem(
                out,
                p.spec.id,
                self.prepared[p.spec.id].plan.probes,
                sealer(self.prepared[p.spec.id].plan.key, p.spec.id, scratch.name),
            )
            for p in attempted
        }
        if not run.timed_out and not any(r.started for r in runs.values()):
            tail = run.stderr.strip()[-1500:]
            message = f"the worker failed before running any candidate code (exit {run.exit_code})"
            message += start_limit(run, self.overrides, attempted)
            return {p.spec.id: self.fault(p, f"{message}:\n{tail}") for p in attempted}
        reports = {}
        for problem in attempted:
            problem_run = runs[problem.spec.id]
            killed = problem_run.exit is not None and problem_run.exit.signal == signal.SIGKILL
            problem_run.out_of_memory = run.oom_killed and killed
            if problem_run.exit is None:  # cut short: its exit.json, sent last, never came
                if run.output_error is not None:
                    problem_run.invalid.append(run.output_error)
                if run.timed_out:
                    problem_run.exit = ProblemExit(
                        exit_code=None, signal=None, timed_out=True, seconds=0
                    )
            reports[problem.spec.id] = judge_problem(
                self.prepared[problem.spec.id], problem_run, sources
            )
        if self.kept is not None and submission is not None:
            self.kept[submission] = {pid: (r, sources) for pid, r in runs.items()}
        return reports

    def grade_many(
        self,
        submissions: list[Path],
        jobs: int,
        on_done: Callable[[SubmissionReport], None] | None = None,
        students: Mapping[Path, Student] | None = None,
    ) -> list[SubmissionReport]:
        """Grade submissions with `jobs` workers at a time (one submission more is staged or
        judged meanwhile); results come back in the input order.

        An exception here (Ctrl-C, SIGTERM), even while the submissions are handed out, stops
        the batch: no submission starts, and running workers end their runs without waiting on
        the engine (their containers' removal under way) before it propagates, within
        `STOPPING_SECONDS`; closing the backend removes whatever is left. What lives at the
        start (torch, the plans, the references) is kept out of the garbage collector's passes
        until the end: judging makes the collector pass over its objects alone."""
        with long_lived():
            return self._grade_many(submissions, jobs, on_done, students)

    def _grade_many(
        self,
        submissions: list[Path],
        jobs: int,
        on_done: Callable[[SubmissionReport], None] | None,
        students: Mapping[Path, Student] | None,
    ) -> list[SubmissionReport]:
        results: dict[Path, SubmissionReport] = {}
        students = students or {}
        self.stop.clear()
        self.slots = threading.BoundedSemaphore(max(1, jobs))
        pool = ThreadPoolExecutor(max_workers=max(1, jobs) + 1)
        futures: dict[Future[SubmissionReport], Path] = {}
        try:
            for s in submissions:
                futures[pool.submit(self.grade, s, None, students.get(s))] = s
            order = {future: index for index, future in enumerate(futures)}
            pending = set(futures)
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                signals.raise_if_stopped()
                for future in sorted(done, key=order.__getitem__):
                    report = future.result()
                    results[futures[future]] = report
                    if on_done is not None:
                        on_done(report)
        except BaseException:
            self.stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            wait(futures, timeout=STOPPING_SECONDS)
            raise
        pool.shutdown()
        return [results[s] for s in submissions]

    def not_attempted(self, problem: Problem, staged: Staged) -> ProblemReport:
        """Its entry file is not in the staged submission: not there, or left out by a limit."""
        entry = problem.spec.entry
        why = staged.left_out.get(entry)
        if why is not None:
            message = f"{entry} was left out: {why}"
        elif staged.unread is not None:
            message = f"no {entry} found: {staged.unread}"
        else:
            found = [display(path) for path in staged.sources] + staged.others
            near = missing_file(entry, found, self.entries) or next(
                (
                    hint
                    for name in problem.spec.symbols
                    if (hint := missing_in_notebook(name, staged.notebooks))
                ),
                None,
            )
            message = f"no {entry} in the submission" + (f": {near}" if near else "")
        return unscored(problem, ProblemStatus.not_attempted, message)

    def failed(self, exc: Exception) -> tuple[list[ProblemReport], str]:
        """Every problem of a submission whose grading raised `exc`, and the report's message: a
        file system limit its files or names broke is a verdict naming the limit; anything else
        is our fault, a grader_error (never the candidate's zero)."""
        limit = file_system_limit(exc)
        if limit is not None:
            message = f"not graded: the submission holds {limit}"
            verdicts = [unscored(p, ProblemStatus.not_attempted, message) for p in self.problems]
            return verdicts, message
        detail = "".join(traceback.format_exception(exc, limit=6))
        message = f"grader error: {exc!r}"
        return [self.fault(p, f"{message}\n{detail}") for p in self.problems], message

    def fault(self, problem: Problem, message: str) -> ProblemReport:
        return unscored(problem, ProblemStatus.grader_error, message)


class Slot:
    """One of the batch's places in the sandbox, held by a submission from its start until its
    worker ends; released once."""

    def __init__(self, slots: threading.BoundedSemaphore) -> None:
        slots.acquire()
        self._slots: threading.BoundedSemaphore | None = slots

    def release(self) -> None:
        slots, self._slots = self._slots, None
        if slots is not None:
            slots.release()


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """Keep what lives now out of the garbage collector's passes until the end of the block
    (its garbage collected first): a batch's collections then pass over its own objects only."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def file_system_limit(exc: Exception) -> str | None:
    """The file system limit that `exc` says a candidate's files or names broke, if any."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return FILE_SYSTEM_LIMITS.get(exc.errno)
    return None


def unscored(problem: Problem, status: ProblemStatus, message: str) -> ProblemReport:
    """A problem report with no checks run."""
    return ProblemReport(
        problem=problem.spec.id,
        title=problem.spec.title,
        status=status,
        score=0,
        max_score=problem.spec.max_score,
        message=message,
    )
