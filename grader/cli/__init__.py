"""The `grader` command: click groups that parse options and call the library.

The top layer, and a thin one: it imports the library's front door (`grader.api`) and
nothing else of the grader, and holds no logic of its own. Commands parse options (their
defaults and choices read from the library), call `grader.api` and print; a `GraderError`
from any of them becomes a one-line error with exit status 2 (`main.Commands`).
"""
