"""The wheel carries the built-in course (`course.toml`, `problems/`, `reference_solutions/` at
the checkout's root) as package data under `grader/_course/`; everything else is in
pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

COURSE = ("course.toml", "problems", "reference_solutions")
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc")


class BuildWithCourse(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib, "grader", "_course")
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for name in COURSE:
            source = Path(name)
            if source.is_dir():
                shutil.copytree(source, target / name, ignore=SKIPPED)
            else:
                shutil.copyfile(source, target / name)


setup(cmdclass={"build_py": BuildWithCourse})
