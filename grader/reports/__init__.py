"""Reports: the pydantic models every output is rendered from, and every renderer.

Owns the report models (`models.py`, with their published JSON schema), the candidate's view
of a report (`redact.py`), each output format (terminal, CSV, Markdown, HTML, JUnit) and the
text they share. Renderers read models only; every byte a candidate controls goes through
`safe.py`; files are named after submissions by `grader.names` only. May import
`grader.specs.problem`, `grader.sandboxing`, `grader.errors`, `grader.names`, `grader.compat` and
`grader.strict` (and name the catalog's types for type checking only).
"""
