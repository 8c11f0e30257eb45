"""Classroom 50: the assignment's autograder, the run inside it and the result it writes."""
