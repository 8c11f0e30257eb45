"""The sandbox: everything on either side of the trust boundary.

Owns the worker (`worker.py`, the only code that runs beside a submission: stdlib, torch and
safetensors), the protocol both sides speak (`protocol.py` writes the job, `results.py` and
`untrusted.py` read what comes back, as data only), staging a submission, the image and the
engine it runs in (`image.py`, `engine.py`), and the backends that run the worker
(`backends/`). May import `grader.compat` and nothing else of the grader: checks, reports and
courses are above it.
"""
