"""Courses: the problems a grader knows, each spec bound to its checks and reference.

Owns a catalog of problem folders with their references and checks (`catalog.py`), a course
folder and the problems it sets (`course.py`), the candidate kit written by `grader release`
(`release.py`) and read back (`kit.py`) and the scaffold of a new problem (`scaffold.py`). A
problem is added by adding files, not code. One layer, above `grader.verdict` and
`grader.reports`, which it may import; what they read of a course (specs, the course file) is
`grader.specs`, below them (`tests/test_layers.py`).
"""
