"""The `grader` command: click groups that parse options and call the library.

The top layer: may import anything, and holds no grading logic. Commands call `grader.api`
(or a platform's or the sandbox's own entry points) and print; a `GraderError` from any of
them becomes a one-line error with exit status 2 (`main.Commands`).
"""
