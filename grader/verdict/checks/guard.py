"""What the sandbox's policy guard reported for a problem: the calls it refused where they were
made, and the signs that it was tampered with. The candidate's process writes these records,
so they are its own report: a missing entry proves nothing, an entry is a finding."""

from __future__ import annotations

from grader.sandboxing.owntext import own
from grader.sandboxing.results import PolicyEvent, ProblemRun


def events(run: ProblemRun) -> list[PolicyEvent]:
    """Every event of the problem: while its entry file was imported, then probe by probe."""
    return [*run.policy, *(e for probe in run.probes.values() for e in probe.data.policy)]


def refused(run: ProblemRun) -> list[str]:
    """The forbidden calls refused at run time, each once (in a candidate-facing message, that
    there were some: the record's words are the candidate's process's)."""
    found = sorted({e.what for e in events(run) if e.kind == "forbidden"})
    if not found:
        return []
    return [own(f"{what} was called at run time (refused)", PUBLIC_REFUSED) for what in found]


def tampered(run: ProblemRun) -> list[str]:
    """What the guard refused or found changed as tampering, each once (in a candidate-facing
    message, that there was some)."""
    found = sorted({e.what for e in events(run) if e.kind == "tampering"})
    if not found:
        return []
    return [own(f"{what} (at run time)", PUBLIC_TAMPERING) for what in found]


PUBLIC_REFUSED = "a forbidden operator was called at run time (refused)"
PUBLIC_TAMPERING = "the sandbox refused or found something at run time (see your instructor)"
