"""The root of every grader failure.

A `GraderError` means the grader could not do what it was asked: bad input from the person
running it (an unknown problem, an unreadable course file or export), an environment that
cannot run it (no Docker engine, no image) or a fault of its own (a reference that fails its
probes). The CLI catches it once and exits 2 with its message. A candidate's mistake is never
one: it is a verdict in the report. Every layer may import this module.
"""


class GraderError(Exception):
    """The grader could not do what it was asked (never a candidate's mistake)."""


class GraderFault(GraderError):
    """Something on the grader's side failed (a reference that fails its own probes): never
    the candidate's zero."""
