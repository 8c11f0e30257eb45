"""The grader's built-in attention course: `course.toml`, `problems/` (hidden checks, mutants,
accepted solutions) and `reference_solutions/`, copied here when the wheel is built. For
instructors: candidates install the grader alone, and a candidate kit."""
