"""Judging one problem of one submission: every check's verdict, the score and the status."""

from __future__ import annotations

import traceback
from collections.abc import Callable

from grader.reports.models import CheckReport, CheckStatus, ProblemReport, ProblemStatus
from grader.sandboxing import owntext
from grader.sandboxing.results import ProblemRun
from grader.specs.problem import CheckId, ProblemSpec
from grader.verdict.checks import Check, Context, Failure, Verdict
from grader.verdict.checks.scope import Sources
from grader.verdict.diagnose import MIXES_TOKENS
from grader.verdict.missing import Missing, missing_text, stopped, why_missing
from grader.verdict.prepare import Prepared
from grader.verdict.suggest import SYNTAX_ERRORS, missing_import, syntax_error


def judge_problem(prepared: Prepared, run: ProblemRun, sources: Sources) -> ProblemReport:
    spec = prepared.problem.spec
    ctx = Context(spec, prepared.plan, run, prepared.reference, sources)
    public = None
    if run.import_error is not None:
        known = ctx.known()
        message, public = both(
            lambda: missing_text(Missing.import_failed, run, spec, ctx.files, known)
        )
        if run.import_error.type in SYNTAX_ERRORS:
            where = syntax_error(sources, spec.entry)
            if where is not None:  # the host's own reading: every output may show it
                message, public = f"importing {spec.entry} raised {where}", None
        if run.import_error.type == "ModuleNotFoundError":
            near = missing_import(sources, spec.entry, run.import_error.message)
            message, public = (message + near, None if public is None else public + near)
        verdict = Verdict(CheckStatus.error, message, public=public, missing=Missing.import_failed)
        verdicts = [verdict] * len(prepared.checks)
        status = ProblemStatus.import_error
    elif not run.imported:  # nothing of the entry file ran to its end: no check can count
        message = unfinished_import(run, spec) + unread_by_host(sources, spec.entry)
        verdict = Verdict(CheckStatus.error, message, missing=why_missing(run))
        verdicts = [verdict] * len(prepared.checks)
        status, _ = problem_status(prepared, run, verdicts)
    else:
        verdicts, fault = judge_checks(prepared.checks, ctx)
        status, _ = problem_status(prepared, run, verdicts)
        message, public = both(lambda: problem_status(prepared, run, verdicts)[1])
        if fault is not None:
            status, message, public = ProblemStatus.grader_error, fault, None
    checks = [
        check_report(c, v, status.zeroes) for c, v in zip(prepared.checks, verdicts, strict=True)
    ]
    return ProblemReport(
        problem=spec.id,
        title=spec.title,
        status=status,
        score=sum(c.points for c in checks),
        max_score=spec.max_score,
        checks=checks,
        message=message,
        public_message=public,
        seconds=run.exit.seconds if run.exit else None,
        stdout=run.stdout,
        stderr=run.stderr,
    )


def both(compose: Callable[[], str]) -> tuple[str, str | None]:
    """A message for instructors, and for candidates where it differs (`owntext.public`)."""
    full = compose()
    with owntext.public():
        public = compose()
    return full, None if public == full else public


def judge_checks(checks: list[Check], ctx: Context) -> tuple[list[Verdict], str | None]:
    """Every check's verdict, and the grader's own failure if a check broke."""
    verdicts = []
    fault = None
    for check in checks:
        try:
            with owntext.tracking() as used:
                verdict = run_check(check, ctx)
            if used:  # composed again, without the candidate's own text, for their view
                with owntext.public():
                    verdict.public = run_check(check, ctx).message
        except Exception as exc:  # a bug in a check is the grader's fault
            fault = f"check {check.spec.name!r} failed: {exc!r}\n{traceback.format_exc(limit=4)}"
            verdict = Verdict(CheckStatus.skipped, "not judged: the grader failed on this check")
        verdicts.append(verdict)
    blame_mixed_tokens(checks, verdicts)
    return verdicts, fault


def blame_mixed_tokens(checks: list[Check], verdicts: list[Verdict]) -> None:
    """A causality failure where another check named a mistake that moves values across
    positions says so: the mask may well be right."""
    named = [v.diagnosis for v in verdicts if v.diagnosis and v.diagnosis.mistake in MIXES_TOKENS]
    if not named:
        return
    cause = f" (here, likely the named mistake {named[0].description!r}, which mixes tokens)"
    for check, verdict in zip(checks, verdicts, strict=True):
        if check.spec.check == CheckId.causality and verdict.status is CheckStatus.failed:
            verdict.message += cause
            verdict.public = None if verdict.public is None else verdict.public + cause


def run_check(check: Check, ctx: Context) -> Verdict:
    try:
        return check.judge(ctx)
    except Failure as failure:
        return Verdict(failure.status, failure.message, missing=failure.missing)


def check_report(check: Check, verdict: Verdict, zeroed: bool) -> CheckReport:
    """The check's verdict; in a problem that scores 0 (`ProblemStatus.zeroes`), a check that
    passed keeps its status and scores 0."""
    spec = check.spec
    scored = verdict.status is CheckStatus.passed and not zeroed
    return CheckReport(
        name=spec.name,
        check=spec.check,
        status=verdict.status,
        points=spec.points if scored else 0.0,
        max_points=spec.points,
        visibility=spec.visibility,
        message=verdict.message,
        public_message=verdict.public,
        diagnosis=verdict.diagnosis,
        pattern=verdict.pattern,
    )


def unread_by_host(sources: Sources, entry: str) -> str:
    """Which of the problem's files the grader cannot read either, and why (the parser over its
    budget, a tree too deep or too large): likely what kept the import from finishing."""
    for file in sources.scope(entry):
        if file.unreadable is not None:
            return f"; the grader cannot read {file.path} either: {file.unreadable.why}"
    return ""


def unfinished_import(run: ProblemRun, spec: ProblemSpec) -> str:
    """Why importing the entry file never finished (a timeout, a signal, an exit)."""
    exit = run.exit
    if exit is None:
        how = "the worker stopped first"
    elif exit.timed_out:
        how = f"stopped {stopped(exit)}"
    elif exit.signal is not None:
        how = run.killed_how()
    elif exit.exit_code not in (0, None):
        how = f"exited with code {exit.exit_code}"
    else:
        how = "its process ended"
    return f"importing {spec.entry} never finished ({how}): no check counts"


def problem_status(
    prepared: Prepared, run: ProblemRun, verdicts: list[Verdict]
) -> tuple[ProblemStatus, str]:
    spec = prepared.problem.spec
    exit = run.exit
    if (
        spec.forbidden_zeroes_problem
        and len(verdicts) == len(prepared.checks)
        and any(
            c.spec.check == CheckId.forbidden_api and v.status is CheckStatus.failed
            for c, v in zip(prepared.checks, verdicts, strict=True)
        )
    ):
        return ProblemStatus.forbidden_api, "the problem scores 0 (see its forbidden API check)"
    if exit is not None and exit.timed_out:
        return ProblemStatus.timeout, (f"stopped {stopped(exit)}; checks that finished count")
    if exit is None or exit.signal is not None or exit.exit_code not in (0, None):
        how = "the worker stopped before this problem finished"
        if exit is not None and exit.signal is not None:
            how = f"the candidate's process was {run.killed_how()}"
        elif exit is not None:
            how = f"the candidate's process exited with code {exit.exit_code}"
        return ProblemStatus.crashed, f"{how}; checks that finished count"
    if run.invalid:  # its words quote or count what the candidate's process wrote
        return ProblemStatus.crashed, (
            "the candidate's process left results the grader cannot read"
            f"{owntext.own(f' ({run.invalid[0]})', '')}; checks that finished count"
        )
    if any(v.missing is Missing.vanished for v in verdicts):
        return ProblemStatus.crashed, "the candidate's process ended early (e.g. os._exit)"
    if exit.stray_processes:
        killed = exit.stray_processes
        return ProblemStatus.graded, f"{killed} process(es) it left running were killed"
    return ProblemStatus.graded, ""
