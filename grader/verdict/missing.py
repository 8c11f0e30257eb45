"""Why a check has no result from the candidate's process to judge: the reason as data, which
the judge decides the problem's status from, and the message a report shows for it."""

from __future__ import annotations

import signal
from collections.abc import Mapping

from grader.compat import StrEnum
from grader.sandboxing.ownmessage import Known
from grader.sandboxing.owntext import own
from grader.sandboxing.results import ProblemExit, ProblemRun
from grader.specs.problem import ProblemSpec


class Missing(StrEnum):
    import_failed = "import_failed"  # importing the entry file raised: no probe ran
    not_started = "not_started"  # the worker ended before this problem ran
    timed_out = "timed_out"  # the problem's time limit stopped it
    killed = "killed"  # by a signal (running out of memory among the causes)
    exited = "exited"  # with a non-zero exit code
    rejected = "rejected"  # it left results the grader refused (malformed or over a cap)
    vanished = "vanished"  # it ended cleanly without this result (e.g. os._exit)


def why_missing(run: ProblemRun) -> Missing:
    """Why a probe of a problem that imported has no result, from how its process ended."""
    exit = run.exit
    if exit is None:
        return Missing.not_started
    if exit.timed_out:
        return Missing.timed_out
    if exit.signal is not None:
        return Missing.killed
    if exit.exit_code not in (0, None):
        return Missing.exited
    return Missing.rejected if run.invalid else Missing.vanished


def missing_text(
    reason: Missing,
    run: ProblemRun,
    spec: ProblemSpec,
    files: Mapping[str, int],
    known: Known | None = None,
) -> str:
    """The message of a check without a result, for `reason`, with the run's particulars
    (`files`: the submission's Python files and their number of lines; `known`: what the
    candidate may see of an exception's message)."""
    exit = run.exit
    if reason is Missing.import_failed:
        assert run.import_error is not None
        return f"importing {spec.entry} raised {run.import_error.summary(files, known)}"
    if reason is Missing.not_started or exit is None:
        return "the worker ended before this problem ran (see the submission's other errors)"
    if reason is Missing.timed_out:
        return f"the problem was stopped {stopped(exit)} before this check's probe finished"
    if reason is Missing.killed and run.out_of_memory:
        return f"the process was {run.killed_how()} during this check"
    if reason is Missing.killed:
        number = exit.signal
        name = f" {signal.Signals(number).name}" if number in signal.valid_signals() else ""
        return f"the process was killed by signal {number}{name} during this check"
    if reason is Missing.exited:
        return f"the process exited with code {exit.exit_code} during this check"
    if reason is Missing.rejected:
        return malformed("; ".join(run.invalid[:3]))
    return "the process ended without a result for this check (e.g. os._exit in the code)"


def stopped(exit: ProblemExit) -> str:
    """When a timed-out problem was stopped: after its own time limit, or with its worker."""
    if exit.seconds >= 1:
        return f"after {exit.seconds:.0f} s"
    return "when the submission's wall clock ran out"


def malformed(what: str) -> str:
    """That the results could not be read; `what` of them, for instructors only (it quotes or
    counts what the candidate's process wrote)."""
    return "the worker's output was malformed" + own(f": {what}", "")
