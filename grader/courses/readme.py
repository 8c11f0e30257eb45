"""The kit's README.md, for candidates: what the course sets, how to check one's work with the
kit, what the kit does not show, and how to hand the work in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grader.reports.safe import markdown
from grader.reports.text import num
from grader.specs.course import Course
from grader.specs.problem import Visibility

if TYPE_CHECKING:
    from grader.courses.catalog import Problem

README_FILE = "README.md"


def kit_readme(course: Course, problems: list[Problem], kit: str) -> str:
    """`README.md` of the kit `kit` (its folder's name) of `course`, which holds `problems` (in
    full: their hidden checks are counted, never named)."""
    name = markdown(course.name) if course.name else "The course"
    due = f" Due {course.due:%Y-%m-%d %H:%M %Z}." if course.due is not None else ""
    first = problems[0].spec if problems else None
    lines = [
        f"# {name}: the candidate kit",
        "",
        f"The problems you are set, with what checks them here.{due}",
        "",
        "| # | problem | hand in | points | checked here | hidden |",
        "| ---: | --- | --- | ---: | ---: | ---: |",
    ]
    for problem in problems:
        spec = problem.spec
        shown = [c for c in spec.checks if c.visibility is Visibility.visible]
        hidden = [c for c in spec.checks if c.visibility is not Visibility.visible]
        lines.append(
            f"| {spec.number} | `{spec.id}`: {markdown(spec.title)} | `{spec.entry}` | "
            f"{num(spec.max_score)} | {len(shown)} ({num(sum(c.points for c in shown))} pts) | "
            f"{len(hidden)} ({num(sum(c.points for c in hidden))} pts) |"
        )
    example = first.id if first is not None else "PROBLEM"
    entry = first.entry if first is not None else "PROBLEM.py"
    lines += [
        "",
        "## Check your work",
        "",
        "With the grader installed as your instructor says, in the folder where this kit's folder",
        f"`{kit}` is: list the problems, read one's statement, contract and starter, write the",
        f"starter to `my-work/{entry}`, and check your files:",
        "",
        "```bash",
        f"grader problems --course {kit}",
        f"grader show {example} --course {kit}",
        f"grader init {example} my-work --course {kit}",
        f"grader check my-work --course {kit}",
        "```",
        "",
        "`grader check` runs the visible checks on your own code, on your machine, and shows what",
        "each found: the named mistake, the largest error and where, your exception with its",
        "file and line. `--problem 1,4` checks only those problems.",
        "",
        "## What the kit does not show",
        "",
        "- The hidden checks: the table above counts them and what they are worth; they run only",
        "  when your work is graded, and their feedback says only whether each passed.",
        "- Checks shown after the due date, counted among the hidden ones until then.",
        "- The reference solutions, and the inputs of grading: the kit holds the reference's",
        "  outputs on the visible checks' inputs only, and grading draws its inputs afresh.",
        "",
        "## Hand in",
        "",
        "One file per problem, named as the table says (the contract's names: a file, class or",
        "function named otherwise is not graded), at the top of your folder, repository or zip;",
        "a helper module of your own beside them may be imported. A Jupyter notebook is read as",
        "the files whose classes and functions it defines. Hand in where your instructor says",
        "(Gradescope, a GitHub Classroom repository, a zip).",
        "",
    ]
    return "\n".join(lines)
