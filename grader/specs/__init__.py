"""What a course and its problems say, as data: a problem's spec (`problem.py`), the course
file (`course.py`), where the built-in course lives (`paths.py`) and importing the course's
own trusted code (`trusted.py`).

The shared vocabulary the layers above read (`grader.reports`, `grader.verdict`,
`grader.courses`): may import `grader.sandboxing`, `grader.errors`, `grader.compat` and
`grader.strict` only (`tests/test_layers.py`).
"""
