"""Courses: the problems a grader knows, as data.

Owns a problem's spec (`spec.py`), a catalog of problem folders with their references and
checks (`catalog.py`), the course file (`coursefile.py`), a course folder and the problems it
sets (`course.py`), the candidate kit written by `grader release` (`release.py`) and read back
(`kit.py`), the scaffold of a new problem (`scaffold.py`) and where the built-in course lives
inside the package (`paths.py`). A problem is added by adding files, not code.

Two layers: `spec.py`, `coursefile.py` and `paths.py` are data that `grader.reports` and
`grader.verdict` read, and with `trusted.py` (importing trusted files) may import only
`grader.sandboxing`, `grader.errors`, `grader.compat` and `grader.strict`; the rest binds each
spec to its checks, so it sits above and may also import `grader.verdict` and
`grader.reports` (`tests/test_layers.py`).
"""
