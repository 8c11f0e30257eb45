"""The instructor's class report: one self-contained HTML file (inline CSS and SVG plots, no
script, nothing fetched) with every submission's status and score, the class's distributions,
pass rates, failures and named mistakes, and a drill-down to every check."""

from __future__ import annotations

from grader.reports.csv import submission_status
from grader.reports.models import (
    AttentionPattern,
    CheckReport,
    ProblemReport,
    ProblemStatus,
    SubmissionReport,
)
from grader.reports.plots import attention_pattern, problem_outcomes, totals_histogram
from grader.reports.safe import html as escape
from grader.reports.similarity import Similarity
from grader.reports.similarity_html import similarity_section
from grader.reports.stats import CheckStats, ClassStats, FailureStats, class_stats, problem_ids
from grader.reports.text import (
    FIXABLE,
    absence_notes,
    check_details,
    fixable,
    fraction,
    num,
    problem_note,
    scored,
    zeroed_note,
    zeroed_pass,
)

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; padding: 0 20px;
       max-width: 1240px; color: #222; }
h1, h2, h3 { font-weight: 600; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .5em 0 1.2em; }
th, td { border-bottom: 1px solid #e3e3e3; padding: .3em .5em; text-align: left;
         vertical-align: top; }
th { font-weight: 600; background: #fafafa; } thead th { vertical-align: bottom; }
.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.text { overflow-wrap: anywhere; min-width: 8em; } .nowrap { white-space: nowrap; }
td.example { min-width: 18em; }
table.scores { width: 100%; } table.scores td.name { min-width: 11em; }
table.scores th.p { font-size: 12px; vertical-align: bottom; }
table.scores td.status { white-space: nowrap; }
table.scores td.total, table.scores th.total { font-weight: 700; border-left: 1px solid #ccc; }
table.scores tbody tr:hover { background: #f3f6fc; }
small, .small { font-size: 11px; color: #666; display: block; line-height: 1.3; }
.plots { display: grid; grid-template-columns: 1fr 1fr; gap: 1.5em; align-items: start; }
figure { margin: 0; } figure svg { width: 100%; height: auto; }
tr.pattern svg { max-width: 640px; }
figcaption { font-size: 12px; color: #555; }
.ok, .passed { color: #1a7f37; } .bad, .failed, .error { color: #c62828; }
.dim, .skipped { color: #888; } .fix { color: #a35200; }
.badge { font-size: 11px; border-radius: 3px; padding: 0 .35em; white-space: nowrap;
         border: 1px solid currentColor; }
.tag { font-size: 11px; border: 1px solid #bbb; border-radius: 3px; padding: 0 .3em; }
pre { background: #f6f6f6; padding: .5em; overflow-x: auto; max-height: 20em;
      white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: .3em 0; } summary { cursor: pointer; }
details.submission { border: 1px solid #e3e3e3; border-radius: 6px; padding: .3em .8em; }
details.submission[open] { padding-bottom: .8em; }
details.problem { margin: .6em 0 .6em 1em; } table.checks { width: 100%; }
.wide { overflow-x: auto; max-width: 100%; }
@media (max-width: 760px) {
  body { padding: 0 8px; margin: .8em auto; }
  .plots { grid-template-columns: 1fr; }
  details.problem { margin-left: .2em; }
}
@media (max-width: 600px) {  /* a check's row as a block: its mark, name and points, then its
                                details under them, the width of the screen */
  table.checks thead { display: none; }
  table.checks, table.checks tbody { display: block; }
  table.checks tr { display: grid; grid-template-columns: auto minmax(0, 1fr) auto auto;
                    border-bottom: 1px solid #e3e3e3; }
  table.checks td { border: 0; min-width: 0; }
  table.checks td.details { grid-column: 2 / -1; padding-top: 0; }
  tr.pattern td:last-child { grid-column: 1 / -1; }
  table.checks td.details:empty, tr.pattern td:first-child { display: none; }
}
"""
SUBMISSION_STATUS = {
    "ok": '<span class="badge ok">ok</span>',
    "not_attempted": '<span class="badge dim">not attempted</span>',
    "fixable": '<span class="badge fix">a zero to look at</span>',
    "grader_error": '<span class="badge bad">grader error: regrade</span>',
}
HARDEST = 10  # checks listed among the hardest
FAILURES = 12  # failures listed among the most common
NAMES_SHOWN = 8  # submissions named on a failure's row


def render_html(
    reports: list[SubmissionReport],
    title: str = "Class report",
    similarity: Similarity | None = None,
) -> str:
    """The instructor's report: one file, no external assets; with `similarity`, the class's
    similar pairs too."""
    stats = class_stats(reports)
    body = [
        f"<h1>{escape(title)}</h1>",
        overview(stats),
        '<div class="plots">',
        figure(totals_histogram(stats), "The totals: submissions per tenth of the maximum."),
        figure(
            problem_outcomes(stats.problems), "Each problem: what became of it, per submission."
        ),
        "</div>",
        '<h2 id="submissions">Submissions</h2>',
        submissions_table(reports),
        '<h2 id="failures">Most common failures</h2>',
        failures_table(stats.failures),
        '<h2 id="mistakes">Most common mistakes</h2>',
        mistakes_table(stats),
        '<h2 id="pass-rates">Pass rates</h2>',
        problems_table(stats),
        "<h3>The hardest checks</h3>",
        hardest_checks(stats.checks),
        "<h3>Every check</h3>",
        *(problem_checks(problem, stats.checks) for problem in problem_ids(reports)),
        *similarity_section(similarity),
        '<h2 id="details">Each submission</h2>',
        *(submission_details(index, r) for index, r in enumerate(reports)),
    ]
    return page(title, body)


def table(head: str, rows: str, css: str = "") -> str:
    """A table in a box of its own that scrolls sideways where the window is narrower (a
    phone's): the page never does."""
    opening = f'<table class="{css}">' if css else "<table>"
    inner = f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody>"
    return f'<div class="wide">{opening}{inner}</table></div>'


def page(title: str, body: list[str]) -> str:
    """A whole self-contained HTML document."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def overview(stats: ClassStats) -> str:
    text = (
        f"{stats.submissions} submission(s); total out of {num(stats.max_total)}: "
        f"mean {num(stats.mean_total)}, median {num(stats.median_total)}."
    )
    if stats.grader_errors:
        text += f" <strong>{stats.grader_errors} hit a grader error: regrade them.</strong>"
    return f"<p>{text}</p>"


def figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


def shared(values: list[float]) -> float | None:
    """The one value all of `values` agree on, or None."""
    return values[0] if len(set(values)) == 1 else None


def breakable(problem_id: str) -> str:
    """A problem id that may wrap after its underscores."""
    return escape(problem_id).replace("_", "_<wbr>")


def submissions_table(reports: list[SubmissionReport]) -> str:
    """One row per submission: a score per problem (`-` not attempted, `-?` where something
    like it was found, starred with its reason when the problem failed), the total and the
    submission's status, with what was found of the problems marked `-?`."""
    problems = problem_ids(reports)
    maxima = {
        p: shared([q.max_score for r in reports for q in r.problems if q.problem == p])
        for p in problems
    }
    max_total = shared([r.max_total for r in reports])
    head = "".join(f'<th class="n p">{breakable(p)}{over(maxima[p])}</th>' for p in problems)
    rows = []
    for index, report in enumerate(reports):
        by_id = {p.problem: p for p in report.problems}
        cells = "".join(score_cell(by_id.get(p), maxima[p]) for p in problems)
        total = num(report.total) + ("" if max_total is not None else f"/{num(report.max_total)}")
        rows.append(
            f'<tr><td class="text name"><a href="#s{index}">{escape(report.submission)}</a>'
            f"{student(report)}</td>{cells}"
            f'<td class="n total">{total}</td><td class="status">{status_cell(report)}</td></tr>'
        )
    head = f'<th>submission</th>{head}<th class="n total">total{over(max_total)}</th>'
    return table(f"{head}<th>status</th>", "".join(rows), "scores")


def over(max_score: float | None) -> str:
    return "" if max_score is None else f'<span class="small">/{num(max_score)}</span>'


def student(report: SubmissionReport) -> str:
    who = report.student
    if who is None:
        return ""
    return f"<small>{escape(' '.join(filter(None, (who.name, f'({who.id})'))))}</small>"


def score_cell(problem: ProblemReport | None, column_max: float | None) -> str:
    if problem is None:
        return '<td class="n"></td>'
    if fixable(problem):
        note = escape(f"not attempted: {problem.message}")
        return f'<td class="n fix" title="{note}">-{FIXABLE}</td>'
    if problem.status is ProblemStatus.not_attempted:
        return '<td class="n dim" title="not attempted">-</td>'
    score = num(problem.score) + ("" if column_max is not None else f"/{num(problem.max_score)}")
    if problem.status.failed:
        return (
            f'<td class="n bad" title="{escape(problem_note(problem))}">{score}*'
            f"<small>{problem.status.short}</small></td>"
        )
    mark = "ok" if problem.score >= problem.max_score else ""
    return f'<td class="n {mark}">{score}</td>'


def status_cell(report: SubmissionReport) -> str:
    attempted = sum(p.status is not ProblemStatus.not_attempted for p in report.problems)
    notes = absence_notes(report.problems)
    found = "".join(f'<small class="fix">{escape(note)}</small>' for note in notes)
    return (
        SUBMISSION_STATUS[submission_status(report)]
        + f"<small>{attempted} of {len(report.problems)} attempted</small>{found}"
    )


def failure_name(failure: FailureStats) -> str:
    if isinstance(failure.failure, ProblemStatus):
        return failure.failure.text
    return "error on a check"


def failures_table(failures: list[FailureStats]) -> str:
    """The most common failures, each with who it happened to and one of its messages; the
    check column only when a failure was on one check."""
    if not failures:
        return "<p>No problem failed: no forbidden API, timeout, crash or import error.</p>"
    shown = failures[:FAILURES]
    on_checks = any(f.check for f in shown)
    rows = "".join(
        f'<tr><td class="bad nowrap">{failure_name(f)}</td><td>{escape(f.problem)}</td>'
        + (f'<td class="text">{escape(f.check)}</td>' if on_checks else "")
        + f'<td class="n">{len(f.submissions)}</td><td class="text">{names(f.submissions)}</td>'
        f'<td class="text example">{escape(first_line(f.example))}</td></tr>'
        for f in shown
    )
    rarer = len(failures) - len(shown)
    head = (
        "<th>failure</th><th>problem</th>"
        + ("<th>check</th>" if on_checks else "")
        + '<th class="n">submissions</th><th>who</th><th>for instance</th>'
    )
    return table(head, rows) + (
        f"<p>And {rarer} rarer failure(s): see each submission below.</p>" if rarer else ""
    )


def names(submissions: list[str]) -> str:
    shown = ", ".join(escape(s) for s in submissions[:NAMES_SHOWN])
    rest = len(submissions) - NAMES_SHOWN
    return shown + (f" and {rest} more" if rest > 0 else "")


def first_line(text: str, limit: int = 200) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def mistakes_table(stats: ClassStats) -> str:
    if not stats.mistakes:
        return "<p>No named mistake was seen.</p>"
    rows = "".join(
        f"<tr><td>{escape(m.problem)}</td><td><code>{escape(m.mistake)}</code></td>"
        f'<td class="n">{m.submissions}</td><td class="text">{escape(m.description)}</td></tr>'
        for m in stats.mistakes
    )
    head = '<th>problem</th><th>mistake</th><th class="n">submissions</th><th>description</th>'
    return table(head, rows)


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def problems_table(stats: ClassStats) -> str:
    """Per problem: who attempted it, who scored full marks, the mean score, who failed it."""
    rows = "".join(
        f"<tr><td>{escape(p.problem)}<small>{escape(p.title)}</small></td>"
        f'<td class="n">{num(p.max_score)}</td>'
        f'<td class="n">{p.attempted}/{len(p.scores)}</td>'
        f'<td class="n">{p.outcomes["full marks"]} '
        f'<span class="small">{percent(p.outcomes["full marks"], p.attempted)}</span></td>'
        f'<td class="n">{num(p.mean)}</td>'
        f'<td class="n">{p.outcomes["failed"] or ""}</td></tr>'
        for p in stats.problems
    )
    head = (
        '<th>problem</th><th class="n">max</th><th class="n">attempted</th>'
        '<th class="n">full marks<span class="small">of attempted</span></th>'
        '<th class="n">mean score<span class="small">of all</span></th><th class="n">failed</th>'
    )
    return table(head, rows)


def check_rows(checks: list[CheckStats], with_problem: bool) -> str:
    return "".join(
        "<tr>"
        + (f"<td>{escape(c.problem)}</td>" if with_problem else "")
        + f'<td class="text">{escape(c.name)}</td>'
        f'<td><span class="tag">{c.visibility.value}</span></td>'
        f'<td class="n">{c.passed}/{c.ran}</td>'
        f'<td class="n {"ok" if c.passed == c.ran else "bad" if c.rate < 0.5 else ""}">'
        f"{percent(c.passed, c.ran)}</td></tr>"
        for c in checks
    )


def checks_table(checks: list[CheckStats], with_problem: bool) -> str:
    head = "<th>problem</th>" if with_problem else ""
    head += '<th>check</th><th>visibility</th><th class="n">passed</th><th class="n">pass rate</th>'
    return table(head, check_rows(checks, with_problem))


def hardest_checks(checks: list[CheckStats]) -> str:
    """The checks the fewest submissions passed, of those that ran them."""
    failed = sorted((c for c in checks if c.passed < c.ran), key=lambda c: c.rate)
    if not failed:
        return "<p>Every check that ran passed.</p>"
    return checks_table(failed[:HARDEST], with_problem=True)


def problem_checks(problem: str, checks: list[CheckStats]) -> str:
    """A problem's checks with their pass rates, folded."""
    own = [c for c in checks if c.problem == problem]
    passed = sum(c.passed == c.ran for c in own)
    summary = (
        f'{escape(problem)} <span class="dim">{passed} of {len(own)} check(s) always passed</span>'
    )
    body = checks_table(own, with_problem=False) if own else "<p>No submission ran it.</p>"
    return f"<details><summary>{summary}</summary>{body}</details>"


def submission_details(index: int, report: SubmissionReport) -> str:
    run = report.run
    meta = (
        f"grader {escape(run.grader_version)}, backend {escape(run.backend)}, "
        f"seed {run.seed}, content {escape(report.content_hash[:12] or 'unknown')}"
    )
    message = f"<p>{escape(report.message)}</p>" if report.message else ""
    attempted = [p for p in report.problems if p.status is not ProblemStatus.not_attempted]
    skipped = [p.problem for p in report.problems if p not in attempted]
    missed = f'<p class="dim">Not attempted: {escape(", ".join(skipped))}.</p>' if skipped else ""
    missed += absence_list(report.problems)
    return (
        f'<details class="submission" id="s{index}"><summary><strong>'
        f"{escape(report.submission)}</strong> {fraction(report.total, report.max_total)} "
        f"{SUBMISSION_STATUS[submission_status(report)]}</summary>{student(report)}"
        f"<p>{meta}</p>{message}{''.join(problem_details(p) for p in attempted)}{missed}"
        "</details>"
    )


def problem_details(problem: ProblemReport) -> str:
    """A problem's score, status, message, checks and output, folded when it has full marks."""
    rows = "".join(check_row(problem, c) for c in problem.checks)
    head = '<th></th><th>check</th><th class="n">points</th><th>visibility</th><th>details</th>'
    checks = table(head, rows, "checks") if rows else ""
    logs = "".join(
        f"<details><summary>{name}</summary><pre>{escape(text)}</pre></details>"
        for name, text in (("stdout", problem.stdout), ("stderr", problem.stderr))
        if text
    )
    full = problem.score >= problem.max_score
    status = "bad" if problem.status is not ProblemStatus.graded else "ok" if full else "dim"
    return (
        f'<details class="problem"{"" if full else " open"}><summary><strong>'
        f"{escape(problem.problem)}</strong> {fraction(problem.score, problem.max_score)}"
        f' <span class="badge {status}">{problem.status.text}</span></summary>'
        + (f"<pre>{escape(problem.message)}</pre>" if problem.message else "")
        + checks
        + logs
        + "</details>"
    )


def check_row(problem: ProblemReport, check: CheckReport) -> str:
    """A check's row; one that passed in a problem that scores 0 says so."""
    lines = check_details(check)
    if zeroed_pass(problem, check):
        lines.insert(0, zeroed_note(problem))
    details = "<br>".join(escape(line) for line in lines)
    return (
        f'<tr><td class="{check.status.value}">{check.status.mark}</td>'
        f'<td class="text">{escape(check.name)}</td>'
        f'<td class="n">{fraction(scored(problem, check), check.max_points)}</td>'
        f'<td><span class="tag">{check.visibility.value}</span></td>'
        f'<td class="text details">{details}</td></tr>'
    ) + (pattern_row(check.pattern) if check.pattern else "")


def pattern_row(pattern: AttentionPattern) -> str:
    """The attention a failing check saw, drawn under it."""
    if pattern.kind == "weights":
        caption = (
            f"The attention weights your module returned, per head (batch 0), on "
            f"{pattern.config}, over the expected: row = query, column = key."
        )
    else:
        caption = (
            f"Which input tokens each output token of your module depends on, on "
            f"{pattern.config}, over the expected: row i, column j is how far output token i "
            "moved when input token j changed (the largest move is 1)."
        )
    svg = attention_pattern(pattern)
    return f'<tr class="pattern"><td></td><td colspan="4">{figure(svg, caption)}</td></tr>'


def render_feedback_html(view: SubmissionReport) -> str:
    """One candidate's feedback, from their view of the report: every problem they attempted,
    each check, and the attention patterns of the checks that failed."""
    title = f"Feedback: {view.submission}"
    attempted = [p for p in view.problems if p.status is not ProblemStatus.not_attempted]
    body = [
        f"<h1>{escape(title)}</h1>",
        f"<p>Total {fraction(view.total, view.max_total)}: {len(attempted)} of "
        f"{len(view.problems)} problem(s) attempted.</p>",
        not_attempted(view.problems),
        *(problem_details(p) for p in attempted),
    ]
    return page(title, body)


def not_attempted(problems: list[ProblemReport]) -> str:
    """The problems not attempted, each with the points it was worth, and what the grader found
    of them ("" if every problem was attempted)."""
    skipped = [p for p in problems if p.status is ProblemStatus.not_attempted]
    if not skipped:
        return ""
    named = ", ".join(f"<strong>{escape(p.problem)}</strong> 0/{num(p.max_score)}" for p in skipped)
    return f'<p id="not-attempted">Not attempted: {named}.</p>' + absence_list(problems)


def absence_list(problems: list[ProblemReport]) -> str:
    """What the grader found of the problems not attempted, as a list ("" if nothing)."""
    notes = absence_notes(problems)
    return f"<ul>{''.join(f'<li>{escape(n)}</li>' for n in notes)}</ul>" if notes else ""
