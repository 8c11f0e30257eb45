"""`grader check` against one import of torch, measured side by side in one run.

For one problem of the complete example (`--problem`, default split_heads) and then the whole
set, prints the median wall time of `python -c "import torch"`, of `grader check` on each
candidate backend (fork, its default; local), as the candidate runs it (the command's start
included), and each one's ratio to the import of torch. Rounds take turns, so that a shared
machine's drift falls on each alike.

    python benchmarks/check_speed.py --rounds 5
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import click

COMPLETE = Path(__file__).resolve().parent.parent / "submissions" / "complete"


def seconds(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - start


def grader_check(backend: str, problem: str | None) -> list[str]:
    chosen = ["--problem", problem] if problem else []
    command = "from grader.cli.main import main; main()"
    return [sys.executable, "-c", command, "check", str(COMPLETE), "--backend", backend, *chosen]


@click.command()
@click.option("--rounds", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--problem", default="split_heads", show_default=True)
def main(rounds: int, problem: str) -> None:
    for scope in (problem, None):
        runs: dict[str, list[str]] = {
            "import torch": [sys.executable, "-c", "import torch"],
            "check, fork": grader_check("fork", scope),
            "check, local": grader_check("local", scope),
        }
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(rounds):
            for name, argv in runs.items():
                times[name].append(seconds(argv))
        floor = statistics.median(times["import torch"])
        click.echo(f"{scope or 'every problem'} ({rounds} rounds, medians):")
        for name, measured in times.items():
            median = statistics.median(measured)
            click.echo(f"  {name:<14} {median:6.2f} s  {median / floor:5.2f}x the import of torch")


if __name__ == "__main__":
    main()
