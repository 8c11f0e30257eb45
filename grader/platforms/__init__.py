"""Platforms: Gradescope, GitHub Classroom and class exports, each with its input and its output.

Each platform keeps together what it needs: the file it is set up with (an autograder zip, a
workflow), the run inside it, and the result format it reads. May import every layer below:
`grader.grade` and its peers, `grader.courses`, `grader.verdict`, `grader.reports`,
`grader.sandboxing`, `grader.errors`; never `grader.outputs`, `grader.api` or `grader.cli`.
"""
