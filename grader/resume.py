"""Resuming a batch: a saved report is reused when nothing that decides the grade changed."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path

from grader import __version__
from grader.errors import GraderError
from grader.names import grader_owned, report_file, slug, submission_name
from grader.reports.models import SubmissionReport, read_report
from grader.sandboxing.locate import locate
from grader.sandboxing.staging import content_hash


class SeedMismatch(GraderError):
    """--resume was asked for with a seed other than the batch's."""


def read_saved(submission: Path, out_dir: Path) -> SubmissionReport | None:
    try:
        return read_report(out_dir / report_file(submission_name(submission)))
    except (OSError, ValueError):
        return None


def batch_seed(submissions: list[Path], out_dir: Path, asked: int | None) -> int | None:
    """The seed the saved batch was graded with, so that one class report holds one seed;
    None when nothing is saved. A different `asked` seed is refused."""
    seeds = {r.run.seed for s in submissions if (r := read_saved(s, out_dir)) is not None}
    if not seeds:
        return asked
    if len(seeds) > 1 or (asked is not None and asked not in seeds):
        raise SeedMismatch(
            f"the reports in {out_dir} were graded with seed(s) {sorted(seeds)}: resume with "
            "that seed, or grade into another --out folder"
        )
    return seeds.pop()


def check_problems(submissions: list[Path], out_dir: Path, problems: list[str]) -> None:
    """Refuse to resume a batch saved with other problems: its full reports would be replaced
    by reports on these alone."""
    saved = {
        tuple(p.problem for p in r.problems)
        for s in submissions
        if (r := read_saved(s, out_dir)) is not None
    }
    other = sorted(saved - {tuple(problems)})
    if other:
        raise GraderError(
            f"the reports in {out_dir} were graded on the problems {', '.join(other[0])}: resume "
            "with the same --problem options, or grade into another --out folder"
        )


def saved_report(
    submission: Path, out_dir: Path, problems: list[str], entries: Collection[str]
) -> SubmissionReport | None:
    """The report saved for `submission` if it is still valid: same grader version, same
    content hash (of the folder graded: `locate` finds it by the course's `entries`), same
    problems and no grader error."""
    report = read_saved(submission, out_dir)
    if report is None:
        return None
    if (
        report.run.grader_version == __version__
        and report.content_hash == content_hash(locate(submission, entries).folder)
        and [p.problem for p in report.problems] == problems
        and not report.grader_fault
    ):
        return report
    return None


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
