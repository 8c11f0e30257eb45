"""The grader's wheel is built from an empty build folder; everything else is in pyproject.toml.
Setuptools packs whatever `build/lib` holds, and a checkout's older builds left the built-in
course there (`grader/_course/`): kept, it would ship to candidates again."""

import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class FreshBuild(build_py):
    def run(self) -> None:
        shutil.rmtree(self.build_lib, ignore_errors=True)
        super().run()


setup(cmdclass={"build_py": FreshBuild})
