"""GitHub Classroom: the grading workflow and the result its reporter reads."""
