"""Writing the chosen output formats of a batch into its report folder."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader.errors import GraderError
from grader.names import name_problem, slug
from grader.platforms.classroom.results import classroom_result, encode_result
from grader.platforms.classroom50.results import (
    Identity,
    classroom50_result,
    output_lines,
    release_body,
    unset,
)
from grader.platforms.gradescope.results import gradescope_results
from grader.reports.csv import write_summary_csv
from grader.reports.html import render_feedback_html, render_html
from grader.reports.junit import SuiteBy, render_junit
from grader.reports.markdown import candidate_feedback, class_summary
from grader.reports.models import SubmissionReport, read_report
from grader.reports.redact import candidate_view
from grader.reports.similarity import Similarity


@dataclass
class Options:
    out_dir: Path
    reveal_after_due: bool = False
    junit_by: SuiteBy = "submission"
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    echo: Callable[[str], None] = print
    similarity: Similarity | None = None  # the class compared, for the HTML class report


def write_text(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def write_csv(reports: list[SubmissionReport], opts: Options) -> list[str]:
    path = opts.out_dir / "summary.csv"
    write_summary_csv(reports, path)
    return [str(path)]


def write_markdown(reports: list[SubmissionReport], opts: Options) -> list[str]:
    written = [write_text(opts.out_dir / "summary.md", class_summary(reports))]
    for report in reports:
        view = candidate_view(report, opts.reveal_after_due)
        written.append(
            write_text(
                opts.out_dir / "feedback" / f"{slug(report.submission)}.md",
                candidate_feedback(view),
            )
        )
    return written


def write_html(reports: list[SubmissionReport], opts: Options) -> list[str]:
    """The class report, and each candidate's feedback as a page of its own."""
    class_report = render_html(reports, similarity=opts.similarity)
    written = [write_text(opts.out_dir / "report.html", class_report)]
    for report in reports:
        view = candidate_view(report, opts.reveal_after_due)
        page = render_feedback_html(view)
        path = opts.out_dir / "feedback" / f"{slug(report.submission)}.html"
        written.append(write_text(path, page))
    return written


def write_junit(reports: list[SubmissionReport], opts: Options) -> list[str]:
    return [write_text(opts.out_dir / "junit.xml", render_junit(reports, opts.junit_by))]


def write_gradescope(reports: list[SubmissionReport], opts: Options) -> list[str]:
    """Each report's `results.json`; none for a report with a grader fault (regrade it)."""
    written = []
    for report in reports:
        results = gradescope_results(report)
        if results is None:
            opts.echo(f"gradescope: no results for {report.submission}: the grader failed on it")
            continue
        written.append(
            write_text(
                opts.out_dir / "gradescope" / f"{slug(report.submission)}.json",
                json.dumps(results, indent=2) + "\n",
            )
        )
    return written


def one_view(reports: list[SubmissionReport], opts: Options, name: str) -> SubmissionReport:
    """The candidate's view of the one report a runner's format renders (its repository)."""
    if len(reports) != 1:
        raise GraderError(f"{name} renders exactly one submission (the repository)")
    return candidate_view(reports[0], opts.reveal_after_due)


def append(path: str, text: str) -> str:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
    return path


def write_classroom(reports: list[SubmissionReport], opts: Options) -> list[str]:
    """The Classroom result and step summary: to the runner's files when it sets them."""
    view = one_view(reports, opts, "github-classroom")
    line = f"result={encode_result(classroom_result(view))}\n"
    written = []
    output, summary = opts.environ.get("GITHUB_OUTPUT"), opts.environ.get("GITHUB_STEP_SUMMARY")
    if output:
        written.append(append(output, line))
    else:
        opts.echo(line.rstrip("\n"))
    if summary:
        written.append(append(summary, candidate_feedback(view)))
    return written


def write_classroom50(reports: list[SubmissionReport], opts: Options) -> list[str]:
    """Classroom 50's `result.json` and `release-body.md`, in `classroom50/`; `status` and
    `summary` to the runner's `$GITHUB_OUTPUT` when it sets one."""
    view = one_view(reports, opts, "classroom50")
    missing = unset(opts.environ)
    if missing:
        opts.echo(f"classroom50: {', '.join(missing)} unset: result.json names 'unknown' there")
    result = classroom50_result(view, Identity.of(opts.environ))
    folder = opts.out_dir / "classroom50"
    written = [
        write_text(folder / "result.json", json.dumps(result, indent=2) + "\n"),
        write_text(folder / "release-body.md", release_body(view, result)),
    ]
    output = opts.environ.get("GITHUB_OUTPUT")
    if output:
        written.append(append(output, output_lines(view, result)))
    return written


Writer = Callable[[list[SubmissionReport], Options], list[str]]

FORMATS: dict[str, Writer] = {
    "csv": write_csv,
    "markdown": write_markdown,
    "html": write_html,
    "junit": write_junit,
    "gradescope": write_gradescope,
    "github-classroom": write_classroom,
    "classroom50": write_classroom50,
}


def parse_formats(values: Sequence[str]) -> tuple[str, ...]:
    """`("csv,html", "junit")` -> ("csv", "html", "junit"), each a format we know."""
    chosen = tuple(v.strip() for value in values for v in value.split(",") if v.strip())
    unknown = [v for v in chosen if v not in FORMATS]
    if unknown:
        raise ValueError(f"{', '.join(unknown)} (choose from {', '.join(FORMATS)})")
    return chosen


def write_outputs(reports: list[SubmissionReport], formats: list[str], opts: Options) -> list[str]:
    """Render every chosen format; returns what was written."""
    written = []
    for name in dict.fromkeys(formats):
        written += FORMATS[name](reports, opts)
    return written


def read_reports(folder: Path) -> list[SubmissionReport]:
    """The submission reports saved in a folder (other JSON files there are skipped); a
    `GraderError` for a report whose submission is no folder's or zip's name."""
    reports = []
    for path in sorted(folder.glob("*.json")):
        try:
            report = read_report(path)
        except ValueError:
            continue
        problem = name_problem(report.submission)
        if problem is not None:
            raise GraderError(
                f"{path}: its submission {report.submission[:80]!r} is {problem}: "
                "not a report the grader wrote"
            )
        reports.append(report)
    return reports
