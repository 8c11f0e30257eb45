"""Courses: the problems a grader knows, as data.

Owns a problem's spec (`spec.py`), the catalog of a course's problems with their references
and checks (`catalog.py`), the course file (`coursefile.py`) and where the built-in course
lives (`paths.py`). A problem is added by adding files, not code.

Two layers: `spec.py`, `coursefile.py` and `paths.py` are data that `grader.reports` and
`grader.verdict` read, and may import only `grader.sandbox`, `grader.errors` and
`grader.compat`; `catalog.py` binds each spec to its checks, so it sits above and may also
import `grader.verdict` and `grader.reports` (`tests/test_layers.py`).
"""
