"""The wheel's package `attention_grader_course` gets the checkout's course (`course.toml`,
`problems/`, `reference_solutions/`, two folders up) as package data; everything else is in
pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CHECKOUT = Path(__file__).resolve().parent.parent.parent
COURSE = ("course.toml", "problems", "reference_solutions")
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc")


class BuildWithCourse(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib, "attention_grader_course")
        for name in COURSE:
            source = CHECKOUT / name
            shutil.rmtree(target / name, ignore_errors=True)
            if source.is_dir():
                shutil.copytree(source, target / name, ignore=SKIPPED)
            else:
                shutil.copyfile(source, target / name)


setup(cmdclass={"build_py": BuildWithCourse})
