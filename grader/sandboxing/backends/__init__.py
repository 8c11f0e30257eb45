"""Backends: where the worker runs (a hardened Docker container, or a local subprocess).

A backend takes a staged submission and a job and gives back the worker's result files; it
never judges them. May import `grader.sandboxing` and `grader.compat`.
"""
