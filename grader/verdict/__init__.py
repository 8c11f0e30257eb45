"""The verdict: from a problem's checks to a scored, explained problem report.

Owns the plan (the probes a problem's checks ask for), preparing the reference's answers, the
checks themselves (`checks/`), the diagnosis of known mistakes and the judge. Runs on the host
only, on data from the sandbox. May import `grader.sandboxing` (the protocol's records, its
results and the executor for trusted reference code), `grader.specs.problem`, `grader.reports`,
`grader.errors`, `grader.compat` and `grader.strict` (and name the catalog's types for type
checking only).
"""
