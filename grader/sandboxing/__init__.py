"""The host's side of the sandbox: what crosses the trust boundary, seen from outside it.

The worker itself (the only code that runs beside a submission: stdlib, torch and safetensors,
where every record of the protocol is defined, both ways) is the `sandbox` package at the root,
with the image's Dockerfile. Here: the host's side of that protocol (`protocol.py` writes the
job, `results.py` and `untrusted.py` read what comes back, as data only), the host's run of the
reference through the worker's executor (`executor.py`), staging a submission from the folder
that holds its problem files (`locate.py`), reading untrusted bytes with a cap (`capped.py`), the
image and the engine it runs in (`image.py`, `engine.py`), and the backends that run the worker
(`backends/`). May import `sandbox`, `grader.errors`,
`grader.compat` and `grader.strict` and nothing else of the grader: checks, reports and courses
are above it (`tests/test_layers.py`).
"""
