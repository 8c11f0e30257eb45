"""Courses: the problems a grader knows, as data.

Owns a problem's spec (`spec.py`), the catalog of a course's problems with their references
and checks (`catalog.py`), the course file (`coursefile.py`) and where the built-in course
lives (`paths.py`). A problem is added by adding files, not code.
"""
