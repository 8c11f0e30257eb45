"""A self-contained HTML report for instructors: distributions, mistakes, every check."""

from __future__ import annotations

from grader.reports.models import CheckReport, CheckStatus, ProblemReport, SubmissionReport
from grader.reports.safe import html as escape
from grader.reports.stats import BUCKETS, ClassStats, ProblemStats, class_stats, problem_ids
from grader.reports.text import check_details, fraction, num, problem_note

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1, h2 { font-weight: 600; } table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: .3em .6em; text-align: left; vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.bars { display: grid; grid-template-columns: 5em 1fr 3em; gap: .2em .5em; max-width: 420px; }
.bar { background: #4a7bd0; height: 1em; min-width: 1px; border-radius: 2px; }
.cards { display: flex; flex-wrap: wrap; gap: 1em; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: .8em 1em; flex: 1 1 300px; }
.passed { color: #1a7f37; } .failed, .error { color: #c62828; } .skipped { color: #888; }
.tag { font-size: 11px; border: 1px solid #bbb; border-radius: 3px; padding: 0 .3em; }
pre { background: #f6f6f6; padding: .5em; overflow-x: auto; max-height: 20em; }
details { margin: .3em 0; } summary { cursor: pointer; }
"""


def render_html(reports: list[SubmissionReport], title: str = "Class report") -> str:
    """The instructor's report: one file, no external assets."""
    stats = class_stats(reports)
    body = [
        f"<h1>{escape(title)}</h1>",
        overview(stats),
        "<h2>Score distribution per problem</h2>",
        '<div class="cards">',
        *(problem_card(p) for p in stats.problems),
        "</div>",
        "<h2>Most common mistakes</h2>",
        mistakes_table(stats),
        "<h2>Submissions</h2>",
        submissions_table(reports),
        *(submission_details(r) for r in reports),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def overview(stats: ClassStats) -> str:
    text = (
        f"{stats.submissions} submission(s); total out of {num(stats.max_total)}: "
        f"mean {stats.mean_total:.3g}, median {num(stats.median_total)}."
    )
    if stats.grader_errors:
        text += f" <strong>{stats.grader_errors} hit a grader error: regrade them.</strong>"
    return f"<p>{text}</p>"


def problem_card(p: ProblemStats) -> str:
    most = max(p.histogram.values(), default=0) or 1
    bars = "".join(
        f"<span>{escape(b)}</span>"
        f'<div class="bar" style="width:{100 * p.histogram[b] / most:.0f}%"></div>'
        f'<span class="n">{p.histogram[b]}</span>'
        for b in BUCKETS
    )
    return (
        f'<div class="card"><h3>{escape(p.problem)}</h3><p>{escape(p.title)}</p>'
        f"<p>max {num(p.max_score)}; attempted {p.attempted}/{len(p.scores)}; "
        f"mean {p.mean:.3g}; median {num(p.median)}</p>"
        f'<div class="bars">{bars}</div></div>'
    )


def mistakes_table(stats: ClassStats) -> str:
    if not stats.mistakes:
        return "<p>No named mistake was seen.</p>"
    rows = "".join(
        f"<tr><td>{escape(m.problem)}</td><td><code>{escape(m.mistake)}</code></td>"
        f'<td class="n">{m.submissions}</td><td>{escape(m.description)}</td></tr>'
        for m in stats.mistakes
    )
    return (
        '<table><tr><th>problem</th><th>mistake</th><th class="n">submissions</th>'
        f"<th>description</th></tr>{rows}</table>"
    )


def submissions_table(reports: list[SubmissionReport]) -> str:
    problems = problem_ids(reports)
    head = "".join(f'<th class="n">{escape(p)}</th>' for p in problems)
    rows = []
    for report in reports:
        by_id = {p.problem: p for p in report.problems}
        cells = "".join(
            f'<td class="n">{escape(fraction(by_id[p].score, by_id[p].max_score))}</td>'
            if p in by_id
            else "<td></td>"
            for p in problems
        )
        status = "grader error" if report.grader_fault else "ok"
        rows.append(
            f'<tr><td><a href="#{anchor(report)}">{escape(report.submission)}</a></td>{cells}'
            f'<td class="n">{fraction(report.total, report.max_total)}</td><td>{status}</td></tr>'
        )
    return (
        f'<table><tr><th>submission</th>{head}<th class="n">total</th><th>status</th></tr>'
        + "".join(rows)
        + "</table>"
    )


def anchor(report: SubmissionReport) -> str:
    return "s-" + "".join(c if c.isalnum() else "-" for c in report.submission)


def submission_details(report: SubmissionReport) -> str:
    run = report.run
    meta = (
        f"grader {escape(run.grader_version)}, backend {escape(run.backend)}, "
        f"seed {run.seed}, content {escape(report.content_hash[:12] or 'unknown')}"
    )
    message = f"<p>{escape(report.message)}</p>" if report.message else ""
    problems = "".join(problem_details(p) for p in report.problems)
    return (
        f'<details id="{anchor(report)}"><summary><strong>{escape(report.submission)}'
        f"</strong> {fraction(report.total, report.max_total)}</summary>"
        f"<p>{meta}</p>{message}{problems}</details>"
    )


def problem_details(problem: ProblemReport) -> str:
    note = problem_note(problem)
    rows = "".join(check_row(c) for c in problem.checks)
    table = (
        (
            f'<table><tr><th></th><th>check</th><th class="n">points</th><th>visibility</th>'
            f"<th>details</th></tr>{rows}</table>"
        )
        if rows
        else ""
    )
    logs = "".join(
        f"<details><summary>{name}</summary><pre>{escape(text)}</pre></details>"
        for name, text in (("stdout", problem.stdout), ("stderr", problem.stderr))
        if text
    )
    return (
        f"<h4>{escape(problem.problem)}: {fraction(problem.score, problem.max_score)}</h4>"
        + (f"<pre>{escape(note)}</pre>" if note else "")
        + table
        + logs
    )


def check_row(check: CheckReport) -> str:
    mark = {
        CheckStatus.passed: "✔",
        CheckStatus.failed: "✘",
        CheckStatus.error: "!",
        CheckStatus.skipped: "–",
    }[check.status]
    details = "<br>".join(escape(line) for line in check_details(check))
    return (
        f'<tr><td class="{check.status.value}">{mark}</td><td>{escape(check.name)}</td>'
        f'<td class="n">{fraction(check.points, check.max_points)}</td>'
        f'<td><span class="tag">{check.visibility.value}</span></td><td>{details}</td></tr>'
    )
