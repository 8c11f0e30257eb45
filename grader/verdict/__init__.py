"""The verdict: from a problem's checks to a scored, explained problem report.

Owns the plan (the probes a problem's checks ask for), preparing the reference's answers, the
checks themselves (`checks/`), the diagnosis of known mistakes and the judge. Runs on the host
only, on data from the sandbox. May import `grader.sandbox` (its results and the executor for
trusted reference code), `grader.courses.spec` and `grader.reports.models`.
"""
