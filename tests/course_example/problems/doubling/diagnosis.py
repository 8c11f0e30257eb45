"""This problem's own diagnosis form: the output with one of the course's mistakes, or none.
Never in the candidate kit (with no mistake, it computes the reference)."""

from grader.verdict.diagnose import form


@form("doubling", mistakes={"tripled": "the input tripled instead of doubled"})
def doubling(weights, args, kwargs, params, knobs):
    """The problem's output, with one mistake switched on or none."""
    return args[0] * (3 if knobs.mistake == "tripled" else 2)
