"""Grading throughput in the Docker sandbox, against its floor and against the naive design.

Grades N copies of the shipped example submissions and prints, measured in the same run, the
wall time per submission of:
  - ours:  one container per submission, torch imported once, problems forked inside it;
  - floor: `docker run IMAGE python -c "import torch"`, once per submission;
  - naive: one container per (submission, attempted problem).

    python benchmarks/grading_throughput.py --copies 4 --jobs 2
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import click

from grader import api
from grader.courses.catalog import Catalog
from grader.sandbox.image import DEFAULT_TAG

ROOT = Path(__file__).resolve().parent.parent


def timed(tasks: list[Callable[[], object]], jobs: int) -> float:
    """Seconds to run every task, `jobs` at a time."""
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for future in [pool.submit(task) for task in tasks]:
            future.result()
    return time.monotonic() - start


def floor_run(image: str) -> None:
    command = ["docker", "run", "--rm", "--network", "none", image, "python", "-c", "import torch"]
    subprocess.run(command, check=True, capture_output=True)


@click.command()
@click.option("--copies", default=4, show_default=True, help="Copies of each example.")
@click.option("--jobs", default=os.cpu_count() or 1, show_default=True)
@click.option("--image", default=DEFAULT_TAG, show_default=True)
@click.option("--seed", default=0, show_default=True)
def main(copies: int, jobs: int, image: str, seed: int) -> None:
    catalog = Catalog()
    with (
        contextlib.ExitStack() as stack,
        tempfile.TemporaryDirectory(prefix="grader-bench-") as tmp,
    ):
        submissions = []
        for example in sorted((ROOT / "submissions").iterdir()):
            for copy in range(copies):
                target = Path(tmp) / f"{example.name}-{copy}"
                shutil.copytree(example, target)
                submissions.append(target)
        ours = stack.enter_context(api.grader(catalog, backend="docker", image=image, seed=seed))
        singles = {
            problem_id: stack.enter_context(
                api.grader(catalog, [problem_id], backend="docker", image=image, seed=seed)
            )
            for problem_id in catalog.problems
        }
        per_problem = [
            (grader, path)
            for path in submissions
            for problem_id, grader in singles.items()
            if (path / catalog.problems[problem_id].spec.entry).is_file()
        ]
        count = len(submissions)
        floor = timed([partial(floor_run, image) for _ in submissions], jobs) / count
        ours_s = timed([partial(ours.grade, p) for p in submissions], jobs) / count
        naive_s = timed([partial(g.grade, p) for g, p in per_problem], jobs) / count
    click.echo(f"{count} submissions, {len(per_problem)} naive containers, {jobs} at a time")
    click.echo(f"floor (docker run ... import torch): {floor:.2f} s per submission")
    click.echo(
        f"ours (one container per submission): {ours_s:.2f} s per submission, "
        f"{ours_s / floor:.2f}x the floor"
    )
    click.echo(
        f"naive (one container per problem):  {naive_s:.2f} s per submission, "
        f"{naive_s / floor:.2f}x the floor, {naive_s / ours_s:.2f}x ours"
    )


if __name__ == "__main__":
    main()
