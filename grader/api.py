"""The library's front door: every command's work, called by the CLI, the benchmark and tests.

Each function takes keyword arguments after its subject, reads no global path (a course is
`--course`'s folder, None for the built-in one) and raises a `GraderError` for every failure of
the grader; a candidate's mistake is a verdict in the returned reports, never an exception. What
runs tensors or talks to the Docker engine is imported by the functions that need it, so that
`--help`, `schema` and `report` start without torch.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from grader.batch import JOBS, Interrupted, Listener, Settings, grade_path, kit_seed
from grader.courses.course import OpenCourse, open_course, read_course
from grader.courses.readme import README_FILE as KIT_README
from grader.errors import GraderError
from grader.outputs import FORMATS, Options, parse_formats, read_reports, write_outputs
from grader.reports.junit import SuiteBy
from grader.reports.models import ProblemStatus, SubmissionReport, json_schema, write_report
from grader.reports.problem import Summary, summary
from grader.reports.safe import plain
from grader.reports.similarity import (
    CLASS_PAIRS_FILE,
    VIEW_FILE,
    Similarity,
    read_view,
    similarity_schema,
    write_pairs,
    write_view,
)
from grader.reports.text import fraction
from grader.resume import stale_warning
from grader.sandboxing.backends.base import BackendName, Isolation, LimitOverrides, batch_limits
from grader.sandboxing.backends.select import make_backend
from grader.sandboxing.defaults import CACHE_DIR, DEFAULT_BASE, DEFAULT_TAG, TORCH_VERSION
from grader.sandboxing.signals import take as take_signals
from grader.secret import ENV_SECRET, given_secret
from grader.shards import Shard, merged_reports, read_shard
from grader.specs.course import reveal_after_due

if TYPE_CHECKING:
    from grader.courses.catalog import Catalog, Problem
    from grader.economy import ProbeWorth
    from grader.validate import Outcome

__all__ = [
    "CACHE_DIR", "DEFAULT_BASE", "DEFAULT_TAG", "ENV_SECRET", "FORMATS", "JOBS", "KIT_README",
    "SUITES",
    "TORCH_VERSION",
    "BackendName", "GraderError", "Interrupted", "Isolation", "LimitOverrides", "Listener",
    "Settings", "Shard", "SuiteBy", "build_image", "download_wheelhouse", "make_base_image",
    "parse_formats", "plain", "take_signals",
]  # fmt: skip

SUITES: tuple[str, ...] = get_args(SuiteBy)
"""What one JUnit testsuite holds: a submission's problems, or a problem's submissions."""
CANDIDATE_BACKEND = BackendName.local
"""Where `validate` runs the course's own code by default."""
DOCKER_ISOLATION = [Isolation.warm.value, Isolation.container.value]
"""How the docker backend may keep submissions apart; warm workers by default."""
CHECK_BACKEND = BackendName.fork
"""Where `check` runs a candidate's own code by default: a fork of the grader's process."""
ENV_COURSE = "GRADER_COURSE"


def listed(values: Sequence[str]) -> tuple[str, ...]:
    """`("1,split_heads", "9")` -> ("1", "split_heads", "9"): an option repeated or
    comma-separated, as `--format` and `--problem` take it."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


# -- courses


def course(path: Path | None, *, checked: bool = True, full: bool = False) -> OpenCourse:
    """The course at `path` (None: the built-in one); `checked`, its specs bound to their checks
    (which imports torch); `full`, refusing a candidate kit, which holds the visible checks only."""
    found = open_course(path, checked)
    if full and found.catalog.is_kit:
        raise GraderError(
            f"{found.folder} is a candidate kit (visible checks only): give the full course"
        )
    return found


def problem_summaries(path: Path | None) -> list[Summary]:
    """The course's problems: number, id, points, checks shown and hidden, title."""
    return [summary(p) for p in course(path, checked=False).catalog.problems.values()]


def one_problem(path: Path | None, problem: str) -> Problem:
    (chosen,) = course(path, checked=False).catalog.select([problem])
    return chosen


def describe_problem(path: Path | None, problem: str) -> str:
    """The problem's statement, contract and starter file, as a candidate reads them."""
    from grader.reports.problem import describe

    return describe(one_problem(path, problem))


def write_starter(path: Path | None, problem: str, directory: Path) -> Path:
    """The problem's starter file written into `directory`, never over an existing file."""
    chosen = one_problem(path, problem)
    target = directory / chosen.spec.entry
    if target.exists():
        raise GraderError(f"{target} exists: not overwritten")
    directory.mkdir(parents=True, exist_ok=True)
    target.write_text(chosen.starter, encoding="utf-8")
    return target


def new_problem(
    path: Path, problem: str, *, symbol: str | None = None, module: bool = False
) -> tuple[Path, Path]:
    """A small working problem scaffolded in the course folder `path` (made if need be), a
    function's or (`module`) an nn.Module's: its folder and its reference solution."""
    from grader.courses.scaffold import scaffold
    from grader.specs.paths import reference_path

    if not re.fullmatch(r"[a-z][a-z0-9_]*", problem):
        raise GraderError(f"{problem!r}: a problem id is lower case letters, digits and _")
    if symbol is None:
        symbol = "".join(part.title() for part in problem.split("_")) if module else "solve"
    if not symbol.isidentifier():
        raise GraderError(f"{symbol!r}: the symbol must be a Python name")
    folder = scaffold(path, problem, symbol, module)
    return folder, reference_path(folder)


def release(path: Path | None, out: Path, *, seed: int | None = None) -> Path:
    """The candidate kit in `out`: statements, starters, contracts and what the visible checks
    need to run, without references or hidden checks."""
    from grader.courses.release import release as write_kit

    return write_kit(course(path), out, seed)


def authoring_guide() -> str:
    """Every field of a spec, every check with its params, every diagnosis form and mistake."""
    from grader.verdict.guide import authoring_guide as guide

    return guide()


SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "report": json_schema,
    "similarity": similarity_schema,
}
"""The JSON schemas published: a submission report's, and `similarity.json`'s."""


def report_schema(kind: str = "report") -> dict[str, Any]:
    """The JSON schema of a submission report, or (`similarity`) of `similarity.json`."""
    return SCHEMAS[kind]()


# -- candidates


@dataclass(frozen=True)
class Feedback:
    """`grader check`'s result: the candidate's view of their report, and per problem how many
    checks were not run and what they are worth."""

    view: SubmissionReport
    unseen: dict[str, tuple[int, float]]

    @property
    def exit_code(self) -> int:
        """0 when every check run passed, 1 otherwise, 2 on a grader error."""
        return 2 if self.view.grader_fault else 0 if self.view.total >= self.view.max_total else 1

    def as_json(self) -> dict[str, Any]:
        """What `grader check --json` prints: the candidate's report (as `grader schema`
        describes it), and per problem the checks not run here and their points."""
        return {
            "report": self.view.model_dump(mode="json"),
            "hidden": {p: {"checks": n, "points": w} for p, (n, w) in self.unseen.items()},
        }


@contextmanager
def opened(path: Path, catalog: Callable[[], Catalog]) -> Iterator[Path]:
    """The submission `path` stands for, as `grade` reads it: a folder, the folder of one of its
    files, or a zip file of one submission, unpacked (as `grade` unpacks it) while it is
    checked; `catalog` reads the course, which a zip's reading needs."""
    if not (path.is_file() and path.suffix == ".zip"):
        yield path.parent if path.is_file() else path
        return
    from grader.platforms.exports import open_export
    from grader.selfcheck import NothingToCheck

    with open_export(path, catalog()) as export:
        if len(export.submissions) != 1:
            raise NothingToCheck(
                f"{path.name} holds {len(export.submissions)} submissions: check your own alone"
            )
        yield export.submissions[0].path


def check(
    path: Path,
    *,
    course_path: Path | None = None,
    problems: Sequence[str] = (),
    backend: BackendName = CHECK_BACKEND,
    seed: int | None = None,
    reveal: bool = False,
    timeout: float | None = None,
    memory_mb: int | None = None,
) -> Feedback:
    """A candidate's own check of `path` (what `grade` reads of one submission: a folder, its
    problem files at the top or in one folder of it, or a zip file of it; or one problem's file
    or a notebook in such a folder) on the checks they may see (by default on every problem
    with a file there; `reveal`, or the course's due date past, adds the `after_due_date` ones).
    The worker starts first: the local one from the course read without its checks (so the
    course is read twice), importing torch while the host does; the forked one once the grader
    has imported torch, before the course is read."""
    with opened(path, lambda: course(course_path, checked=False).catalog) as folder:
        file = path if path.is_file() and folder == path.parent else None
        limits = LimitOverrides(problem_seconds=timeout, memory_mb=memory_mb)
        return check_folder(
            folder, file, course_path, problems, backend, seed, reveal, limits
        )  # fmt: skip


def check_folder(
    folder: Path,
    file: Path | None,
    course_path: Path | None,
    problems: Sequence[str],
    backend: BackendName,
    seed: int | None,
    reveal: bool,
    limits: LimitOverrides,
) -> Feedback:
    """`check` of a folder (or of one `file` of it)."""
    from grader.selfcheck import attempted, check_submission, problem_of

    def chosen(catalog: Catalog) -> list[Problem]:
        if problems:
            return catalog.select(list(problems))
        return problem_of(catalog, file) if file else attempted(catalog, folder)

    ahead = None
    if backend is not BackendName.fork:  # a worker of its own, with the chosen problems' limits
        ahead = batch_limits(
            [p.spec.limits for p in chosen(course(course_path, checked=False).catalog)], limits
        )
    started = make_backend(backend, isolation=Isolation.container, ready=ahead)  # no pool
    try:
        # With its checks, the course imports torch (or says to install it), as the worker does.
        found = course(course_path)
        from grader.verdict.plan import draw_seed

        selected = chosen(found.catalog)
        drawn = draw_seed(kit_seed(found.catalog, seed))
        shown = reveal_after_due(reveal, found.course)
        view, unseen = check_submission(
            folder, found.catalog, selected, started, drawn, shown, limits
        )
    finally:
        started.close()  # the worker started ahead, if no job took it
    return Feedback(view, unseen)


# -- instructors


@dataclass(frozen=True)
class Graded:
    """A graded batch: its reports in input order, and the course's problem numbers."""

    reports: list[SubmissionReport]
    numbers: dict[str, int]
    kit: bool  # graded with a candidate kit: the visible checks only, feedback not credit


def batch_settings(
    *,
    isolation: Isolation | None = None,
    timeout: float | None = None,
    memory_mb: int | None = None,
    secret_file: Path | None = None,
    **settings: Any,
) -> Settings:
    """A batch's settings from the grading person's options: `timeout` and `memory_mb` over the
    specs' limits; `isolation` for the docker backend only (default: warm workers); the secret
    of `secret_file`, else of `GRADER_SECRET`, if any (`given_secret`)."""
    if (
        isolation is not None
        and settings.get("backend", Settings.backend) is not BackendName.docker
    ):
        raise GraderError(
            "--isolation is for --backend docker: the local backend runs each submission in a "
            "process of its own, unsandboxed"
        )
    limits = LimitOverrides(problem_seconds=timeout, memory_mb=memory_mb)
    isolation = isolation or Settings.isolation
    return Settings(
        limits=limits, isolation=isolation, secret=given_secret(secret_file), **settings
    )


def grade(
    path: Path,
    *,
    out_dir: Path,
    course_path: Path | None = None,
    settings: Settings | None = None,
    problems: Sequence[str] = (),
    formats: Sequence[str] = (),
    reveal: bool = False,
    junit_by: SuiteBy = "submission",
    listener: Listener | None = None,
) -> Graded:
    """Grade what `path` holds (a submission, a folder or zip of them, a Gradescope export, a
    folder of Classroom clones), save each report in `out_dir` and render `formats` there."""
    settings = settings or Settings()
    listener = listener or Listener()
    found = course(course_path, checked=False)  # bound to its checks once the workers start
    if found.catalog.is_kit:
        listener.warn("a candidate kit: grading its visible checks only (feedback, not credit)")

    def checked() -> Catalog:
        return course(course_path).catalog

    reports = grade_path(found.catalog, path, out_dir, settings, problems, listener, checked)
    shown = reveal_after_due(reveal, found.course)
    compared = None
    if "html" in formats:  # the class report shows the class's similar pairs
        from grader.similarity.compare import compare_class

        try:
            compared = compare_class(path, found.catalog, problems)
        except Exception as exc:  # advice: its failure costs the class report its section only
            listener.warn(f"the class report has no similarity: comparing failed: {exc!r}")
        else:
            pairs = write_pairs(compared.pairs, out_dir, CLASS_PAIRS_FILE)
            for written in (pairs, write_view(compared, out_dir)):
                listener.wrote(str(written))
    render(reports, formats, out_dir, shown, junit_by, listener.note, listener.wrote, compared)
    numbers = {p.spec.id: p.spec.number for p in found.catalog.problems.values()}
    return Graded(reports, numbers, found.catalog.is_kit)


MERGED_SIMILARITY = (
    "no similarity across the class in a merge of shards: each shard compared only its own "
    "submissions; the class's similarity needs all submissions together: "
    "`grader similarity PATH`"
)


def report(
    directories: Sequence[Path],
    *,
    out_dir: Path | None = None,
    course_path: Path | None = None,
    formats: Sequence[str] = (),
    reveal: bool = False,
    junit_by: SuiteBy = "submission",
    listener: Listener | None = None,
) -> list[SubmissionReport]:
    """Render outputs again from the JSON reports saved in one folder, without regrading; or
    merge the output folders of a batch's shards into `out_dir` (a shard's folder with
    `out_dir` is merged, and refused unless every shard of its batch is given), saying that
    the merge holds no similarity across the class."""
    listener = listener or Listener()
    shown = reveal_after_due(reveal, read_course(course_path))
    (first, *others) = directories
    merging = bool(others) or (out_dir is not None and read_shard(first) is not None)
    compared = None
    if not merging:
        reports = saved_reports(first)
        compared = saved_similarity(first, listener) if "html" in formats else None
    elif out_dir is None:
        raise GraderError("merging shards needs --out: the folder of the merged outputs")
    else:
        reports = merged_reports(directories, out_dir)
        stale = stale_warning((r.submission for r in reports), out_dir, "these shards")
        if stale is not None:
            listener.warn(stale)
    target = out_dir or first
    if target.resolve() != first.resolve():  # a merge's out_dir is never one of its shards
        for saved in reports:
            write_report(saved, target)
    render(reports, formats, target, shown, junit_by, listener.note, listener.wrote, compared)
    if merging:
        listener.note(f"merged {len(reports)} report(s) from {len(directories)} shards")
        listener.note(MERGED_SIMILARITY)
    return reports


def saved_similarity(folder: Path, listener: Listener) -> Similarity | None:
    """The similarity section `grade --format html` saved in `folder`, for the class report
    rendered again; a warning, and none, if it cannot be read."""
    try:
        return read_view(folder)
    except (OSError, ValueError) as exc:
        listener.warn(f"{folder / VIEW_FILE} unreadable, the class report has no similarity: {exc}")
        return None


def similarity(
    path: Path,
    *,
    out_dir: Path | None = None,
    course_path: Path | None = None,
    problems: Sequence[str] = (),
) -> Similarity:
    """The pairs of submissions in `path` (what `grade` reads) ranked by similarity per problem,
    those a person should look at flagged; with `out_dir`, also written to its
    `similarity.json`. It ranks pairs: it changes no score."""
    from grader.similarity.compare import compare_class

    compared = compare_class(path, course(course_path, checked=False).catalog, problems)
    if out_dir is not None:
        write_pairs(compared.pairs, out_dir)
    return compared


def similarity_lines(compared: Similarity, top: int = 5) -> list[str]:
    """Each problem's most similar pairs, flagged ones marked, then what was read of notebooks
    and what was left out."""
    from grader.reports.similarity import summary_lines

    return summary_lines(compared, top)


def validate(
    course_path: Path | None = None,
    *,
    problems: Sequence[str] = (),
    backend: BackendName = CANDIDATE_BACKEND,
    seed: int = 0,
    jobs: int | None = None,
    timeout: float | None = None,
    memory_mb: int | None = None,
    probes: dict[str, list[ProbeWorth]] | None = None,
) -> list[Outcome]:
    """Prove `problems`' checks: references pass, starters and mutants lose what they must
    (`timeout` and `memory_mb` over the specs' limits, as `grade` takes them); with `probes`,
    weigh each problem's probes there (`grader.economy`)."""
    from grader.validate import validate_problems

    catalog = course(course_path, full=True).catalog
    selected = catalog.select(list(problems))
    limits = LimitOverrides(problem_seconds=timeout, memory_mb=memory_mb)
    backend_made = make_backend(backend)
    return validate_problems(catalog, selected, backend_made, seed, jobs or JOBS, limits, probes)


def saved_reports(folder: Path) -> list[SubmissionReport]:
    """The submission reports saved in `folder`; a `GraderError` when there is none."""
    reports = read_reports(folder)
    if not reports:
        raise GraderError(f"no submission reports in {folder}")
    return reports


def render(
    reports: list[SubmissionReport],
    formats: Sequence[str],
    out_dir: Path,
    reveal_after_due: bool = False,
    junit_by: SuiteBy = "submission",
    echo: Callable[[str], None] = print,
    wrote: Callable[[str], None] = lambda _path: None,
    similarity: Similarity | None = None,
) -> list[str]:
    """Write the gradebook CSV and every other chosen format into `out_dir`; what was written.
    `echo` prints what a format writes to the terminal (the Classroom result line);
    `similarity`, the class compared, goes into the HTML class report."""
    options = Options(out_dir, reveal_after_due, junit_by, echo=echo, similarity=similarity)
    written = write_outputs(reports, ["csv", *formats], options)
    for path in written:
        wrote(path)
    return written


# -- platforms


def classroom_init(
    repo: Path,
    *,
    grader_url: str,
    ref: str | None = None,
    python_version: str = "3.11",
    force: bool = False,
    course_path: Path | None = None,
) -> tuple[Path, Path]:
    """The course's candidate kit in REPO/.grader/kit and the workflow that runs it: the kit's
    folder and the workflow's file (REPO: the assignment's template repository)."""
    from grader.courses.release import release as write_kit
    from grader.platforms.classroom.workflow import KIT, WORKFLOW_PATH, workflow, write_workflow

    if not repo.is_dir():
        raise GraderError(
            f"{repo} is not a folder: give the assignment's template repository (a clone)"
        )
    if (repo / WORKFLOW_PATH).exists() and not force:
        raise GraderError(f"{repo / WORKFLOW_PATH} exists (use --force to replace it)")
    kit = repo / KIT
    if force:
        shutil.rmtree(kit, ignore_errors=True)
    write_kit(course(course_path), kit)
    return kit, write_workflow(repo, workflow(grader_url, ref, python_version), force)


@dataclass(frozen=True)
class Classroom50Assignment:
    """What `classroom50_init` wrote into the assignment's folder."""

    autograder: Path
    kit: Path
    runtime: Path


def classroom50_init(
    folder: Path,
    *,
    grader_url: str,
    ref: str | None = None,
    python_version: str = "3.11",
    problems: Sequence[str] = (),
    force: bool = False,
    course_path: Path | None = None,
) -> Classroom50Assignment:
    """An assignment's autograder.py for Classroom 50, the candidate kit of the course (or of
    `problems`) beside it, and its runtime block (FOLDER: <classroom>/autograders/<slug>)."""
    from grader.courses.catalog import Catalog
    from grader.courses.release import release as write_kit
    from grader.platforms.classroom50.autograder import (
        KIT,
        prepare_folder,
        requirement,
        write_autograder,
    )

    found = course(course_path, full=True)
    if problems:
        found = replace(found, catalog=Catalog.of(found.catalog.select(list(problems))))
    prepare_folder(folder, force, python_version)
    kit = write_kit(found, folder / KIT)
    script, runtime = write_autograder(folder, requirement(grader_url, ref), python_version)
    return Classroom50Assignment(script, kit, runtime)


def classroom50_run(
    checkout: Path,
    *,
    out_dir: Path,
    user: str | None = None,
    course_path: Path | None = None,
    on_fault: Callable[[str], None] = lambda _line: None,
) -> SubmissionReport:
    """Grade a student's checkout inside Classroom 50's runner: its report, result.json and
    release-body.md in `out_dir` (and `status`, `summary` to $GITHUB_OUTPUT); what went wrong
    on the grader's side, line by line to `on_fault` (the job's log: no Release is published)."""
    from grader.platforms.classroom50.run import run_classroom50

    report = run_classroom50(checkout, user, course(course_path).catalog)
    write_report(report, out_dir)
    render([report], ["classroom50"], out_dir)
    for problem in report.problems:
        if problem.status is ProblemStatus.grader_error:
            on_fault(f"grader error on {problem.problem}: {problem.message}")
    return report


def gradescope_build(
    out: Path, *, wheelhouse: Path | None = None, course_path: Path | None = None
) -> Path:
    """The autograder zip to upload to Gradescope: the grader and the full course."""
    from grader.platforms.gradescope.autograder import build_autograder
    from grader.specs.paths import installed_course

    found = course(course_path)  # proves the course loads before it is packed
    if found.catalog.is_kit:
        raise GraderError(f"{found.folder} is a candidate kit: pack the full course")
    builtin = installed_course()
    is_builtin = builtin is not None and found.folder.resolve() == builtin.resolve()
    return build_autograder(out, None if is_builtin else found.folder, wheelhouse)


def gradescope_requirements() -> list[str]:
    """What the autograder's setup.sh installs."""
    from grader.platforms.gradescope.autograder import requirements

    return requirements()


def gradescope_run(
    submission: Path, *, results: Path, user: str | None = None, course_path: Path | None = None
) -> SubmissionReport:
    """Grade one upload inside Gradescope's container and write its results.json."""
    from grader.platforms.gradescope.run import run_gradescope

    return run_gradescope(submission, results, user, course(course_path).catalog)


def gradescope_summary(report: SubmissionReport, results: Path) -> str:
    """What `gradescope run` prints, for instructors: the score, each problem's status and
    failures, the notes, and where results.json (none after a grader fault) and the full
    report are."""
    from grader.platforms.gradescope.run import report_path
    from grader.platforms.gradescope.summary import instructor_summary

    written = None if report.grader_fault else results
    return instructor_summary(report, written, report_path(results))


# -- the sandbox image


def build_image(tag: str, *, on_note: Callable[[str], None], **options: Any) -> dict[str, str]:
    """Build the sandbox image (`grader.sandboxing.image.build_image`'s options), saying on
    `on_note` what is built and how long it took; the image's facts."""
    from grader.sandboxing import image

    mode = "air-gapped" if options.get("wheelhouse") else "online"
    on_note(f"building {tag} ({mode}, base {options.get('base_image') or 'default'})")
    start = time.monotonic()
    facts = image.build_image(tag, **options)
    on_note(f"built {tag} in {time.monotonic() - start:.0f}s")
    return facts.as_dict()


def make_base_image(name: str, **options: Any) -> str:
    """An offline base image from debootstrap; its id."""
    from grader.sandboxing import image

    return image.make_base_image(name, **options)


def download_wheelhouse(dest: Path, **options: Any) -> list[Path]:
    """Download wheels for the image, or (`packages`) for Gradescope's setup.sh."""
    from grader.sandboxing import image

    return image.download_wheelhouse(dest, **options)


def clean_containers() -> int:
    """Remove every leftover grader container, running or stopped; how many there were."""
    from grader.sandboxing.engine import grader_containers, remove_containers

    ids = grader_containers()
    remove_containers(ids)
    return len(ids)


# -- the terminal


def total_text(report: SubmissionReport) -> str:
    """A report's total out of its maximum, as people read points."""
    return fraction(report.total, report.max_total)


def print_feedback(feedback: Feedback) -> None:
    """A candidate's feedback on the checks they may see, and what was not run here."""
    from grader.reports.terminal import print_feedback as show

    show(feedback.view, feedback.unseen)


def print_problems(summaries: list[Summary]) -> None:
    """The course's problems as a table that fits the terminal."""
    from grader.reports.terminal import print_problems as show

    show(summaries)


def print_graded(graded: Graded, out_dir: Path, formats: Sequence[str] = ()) -> int:
    """The batch's score table by problem number, with its legend and notes (not where the
    Classroom format prints its own), where the reports are; the exit status: 2 when a grader
    error occurred (in red), else 0."""
    from rich.console import Console

    from grader.reports.terminal import print_scores as show

    if "github-classroom" not in formats:
        show(graded.reports, graded.numbers)
    errors = Console(stderr=True, highlight=False)
    where = f"Reports written to {out_dir}/"  # folded in a terminal, else on one line
    errors.print(where, markup=False, overflow="fold", soft_wrap=not errors.is_terminal)
    if any(r.grader_fault for r in graded.reports):
        errors.print("[red]A grader error occurred: see the reports' messages.[/red]")
        return 2
    return 0


def weighed_probes(probes: dict[str, list[ProbeWorth]], table: bool = False) -> str:
    """What `validate` found of the probes: with `table`, every probe's row (Markdown), else a
    line for each probe that finds nothing the others do not."""
    from grader.economy import markdown, redundant

    return markdown(probes) if table else "\n".join(redundant(probes))


def print_outcomes(outcomes: list[Outcome]) -> str:
    """The table of `validate`'s outcomes; its summary line, returned."""
    from grader.reports.terminal import print_outcomes as show

    show(outcomes)
    misses = sum(not o.ok for o in outcomes)
    mutants = sum(o.kind == "mutant" for o in outcomes)
    problems = len({o.problem for o in outcomes})
    return (
        f"{len(outcomes) - misses} passed, {misses} failed ({problems} problems, {mutants} mutants)"
    )


def progress(total: int) -> AbstractContextManager[Callable[[str], None]]:
    """A progress bar advanced once per graded submission."""
    from grader.reports.terminal import progress as bar

    return bar(total)
