"""How long `grader similarity` takes on a class of N submissions of all eleven problems, and
how that grows with N: the class is made of the shipped complete submission, the accepted
solutions and the test class's students, each copy put through a random mix of disguises.

    PYTHONPATH=. python benchmarks/similarity_speed.py --sizes 100,250,500
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

import click

from grader import api
from tests.similarity_class import honest_class, write_class
from tests.similarity_disguises import DISGUISES, Files


def perturbed_class(size: int, seed: int) -> dict[str, Files]:
    """`size` submissions, each a student's solutions through a random mix of disguises."""
    chooser = random.Random(seed)
    students = honest_class()
    made: dict[str, Files] = {}
    for index in range(size):
        files = students[chooser.choice(sorted(students))]
        for name in chooser.sample(sorted(DISGUISES), chooser.randint(1, 3)):
            files = DISGUISES[name](files)
        made[f"student{index:04d}"] = files
    return made


@click.command()
@click.option("--sizes", default="100,250,500", show_default=True, help="Class sizes to time.")
@click.option("--seed", default=0, show_default=True)
def main(sizes: str, seed: int) -> None:
    """Time the comparison of classes of each size."""
    previous: tuple[int, float] | None = None
    for size in (int(s) for s in sizes.split(",")):
        with tempfile.TemporaryDirectory() as scratch:
            folder = write_class(perturbed_class(size, seed), Path(scratch))
            start = time.perf_counter()
            result = api.similarity(folder)
            took = time.perf_counter() - start
        flagged = sum(p.flagged for p in result.pairs)
        growth = ""
        if previous is not None:
            growth = f", x{took / previous[1]:.2f} for x{size / previous[0]:.2f} submissions"
        click.echo(f"N={size}: {took:.1f} s, {len(result.pairs)} pairs, {flagged} flagged{growth}")
        previous = (size, took)


if __name__ == "__main__":
    main()
