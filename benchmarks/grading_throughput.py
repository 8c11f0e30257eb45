"""Grading throughput in the Docker sandbox: warm workers, one container each, and the floor.

For each set (`complete`: copies of the complete example; `class`: copies of every shipped
example in turn) and each number of copies, prints, measured side by side in one run, the wall
time per submission of:
  - floor: `docker run IMAGE python -c "import torch"`, once per submission;
  - container: one container per submission (`--isolation container`);
  - warm: warm workers (`--isolation warm`, the default), their start included: started
    ahead, as `grader grade` does, while the host runs its references (also counted);
  - compute: the problems' own time inside the warm workers (each problem's child, from its
    fork to its exit: importing the candidate's code, running the probes, writing the data),
    summed, divided by the jobs run at once;
then the latency of one complete submission: a fresh container (cold) and a warm worker, and
`grader check` on it as a candidate runs it (the command's wall time, its start included), on
its default local backend and in a fresh container (of the default image: `check` has no
`--image`).

With `--phases N` it measures instead where the time of N complete submissions goes, graded
one at a time on the local backend: each phase of the problems' children (`phases.py`: the
fork, loading the problem's part, setting up and arming the guard, importing the candidate's
files, the probes, the guard's checks, the records, the exit), the host's judging, and the
rest of the host's work (staging, the worker's start, reading the results), per submission.

With `--rounds R` the batch is cut into R slices and the designs take turns, slice by slice
(each design's workers kept from one slice to the next), so that a shared machine's drift
falls on every design alike.

    python benchmarks/grading_throughput.py --copies 12 --jobs 2
    python benchmarks/grading_throughput.py --copies 200 --design floor --design warm --rounds 5
    python benchmarks/grading_throughput.py --phases 20
"""

from __future__ import annotations

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
import phases

from grader.courses.catalog import Catalog
from grader.grade import Grader, long_lived
from grader.reports.models import SubmissionReport
from grader.sandboxing.backends import local
from grader.sandboxing.backends.base import Backend, batch_limits
from grader.sandboxing.backends.docker import DockerBackend
from grader.sandboxing.backends.warm import WarmBackend
from grader.sandboxing.defaults import DEFAULT_TAG
from grader.sandboxing.paths import WORKER_FILE

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "submissions"
DESIGNS = ("floor", "container", "warm")


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


def copies_of(examples: list[Path], count: int, dest: Path) -> list[Path]:
    """`count` submissions, copies of `examples` in turn."""
    made = []
    for index in range(count):
        example = examples[index % len(examples)]
        target = dest / f"{example.name}-{index}"
        shutil.copytree(example, target)
        made.append(target)
    return made


def side_by_side(
    designs: tuple[str, ...], submissions: list[Path], jobs: int, image: str, seed: int, rounds: int
) -> dict[str, tuple[float, list[SubmissionReport]]]:
    """Seconds each design takes for the whole batch (the workers' start and the host's
    reference run included, not its torch import) and its reports, the designs taking turns
    slice by slice."""
    catalog = Catalog()
    problems = list(catalog.problems.values())
    ready = batch_limits([p.spec.limits for p in problems])
    backends: dict[str, Callable[[], Backend]] = {
        "container": partial(DockerBackend, image),
        "warm": partial(WarmBackend, image, ready=ready, workers=min(jobs, len(submissions))),
    }
    graders: dict[str, Grader] = {}
    seconds = dict.fromkeys(designs, 0.0)
    reports: dict[str, list[SubmissionReport]] = {d: [] for d in designs}
    size = -(-len(submissions) // rounds)
    try:
        for first in range(0, len(submissions), size):
            part = submissions[first : first + size]
            for design in designs:
                start = time.monotonic()
                if design == "floor":
                    timed([partial(floor_run, image) for _ in part], jobs)
                else:
                    if design not in graders:
                        graders[design] = Grader(catalog, problems, backends[design](), seed)
                    reports[design] += graders[design].grade_many(part, jobs)
                seconds[design] += time.monotonic() - start
    finally:
        for grader in graders.values():
            grader.close()
    return {d: (seconds[d], reports[d]) for d in designs}


def check_latency(submission: Path, backend: str, runs: int = 3) -> float:
    """Median wall time of the `grader check` command on one submission, start to exit."""
    grader = shutil.which("grader") or "grader"
    seconds = []
    for _ in range(runs):
        start = time.monotonic()
        subprocess.run(
            [grader, "check", str(submission), "--backend", backend],
            check=True,
            capture_output=True,
        )
        seconds.append(time.monotonic() - start)
    return sorted(seconds)[len(seconds) // 2]


def latency(backend: Backend, submission: Path, seed: int, warm: bool) -> float:
    """Seconds to grade one submission, after a first one has warmed the backend if `warm`."""
    catalog = Catalog()
    grader = Grader(catalog, list(catalog.problems.values()), backend, seed)
    try:
        if warm:
            grader.grade(submission)
        start = time.monotonic()
        grader.grade(submission)
        return time.monotonic() - start
    finally:
        grader.close()


def phase_breakdown(count: int, seed: int) -> list[tuple[str, float]]:
    """Seconds per complete submission of each phase, graded `count` times one at a time on
    the local backend (after one to warm up), what lives at the start kept out of the garbage
    collector's passes as a batch does: the children's phases, the host's judging, the rest of
    the host's work."""
    catalog = Catalog()
    with tempfile.TemporaryDirectory(prefix="grader-phases-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o777)
        vars(local)["WORKER_FILE"] = phases.launcher(folder)
        judging = [0.0]
        try:
            with Grader(catalog, list(catalog.problems.values()), local.LocalBackend(), seed) as g:
                judge = g.judge

                def timed_judge(*args: object, **kwargs: object) -> object:
                    start = time.perf_counter()
                    try:
                        return judge(*args, **kwargs)  # type: ignore[arg-type]
                    finally:
                        judging[0] += time.perf_counter() - start

                g.grade(EXAMPLES / "complete")
                for path in folder.glob("phases-*.json"):
                    path.unlink()
                vars(g)["judge"] = timed_judge
                with long_lived():  # as `grade_many` grades a batch, without its overlap
                    start = time.perf_counter()
                    for _ in range(count):
                        report = g.grade(EXAMPLES / "complete")
                        if report.total != report.max_total:
                            scored = f"the complete example scored {report.total}"
                            raise click.ClickException(scored)
                    wall = time.perf_counter() - start
        finally:
            vars(local)["WORKER_FILE"] = WORKER_FILE
        workers = phases.read(folder)
    if len(workers) != count:
        raise click.ClickException(f"{len(workers)} workers wrote their phases, not {count}")
    totals = dict.fromkeys((*phases.PHASES, "child"), 0.0)
    for problems in workers:
        for times in problems.values():
            for phase, seconds in times.items():
                totals[phase] += seconds
    children = totals.pop("child")
    rows = [(f"child: {p}", totals[p] / count) for p in phases.PHASES]
    rows.append(("child: the rest", (children - sum(totals.values())) / count))
    rows.append(("host: judging", judging[0] / count))
    rows.append(("host: the rest", (wall - children - judging[0]) / count))
    return rows


@click.command()
@click.option("--copies", multiple=True, type=int, default=[12], show_default=True)
@click.option("--set", "sets", multiple=True, type=click.Choice(["complete", "class"]))
@click.option("--design", "designs", multiple=True, type=click.Choice(DESIGNS))
@click.option("--jobs", default=os.cpu_count() or 1, show_default=True)
@click.option("--image", default=DEFAULT_TAG, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--rounds", default=1, show_default=True, help="slices the designs take in turn")
@click.option("--phases", "phase_count", type=int, help="time the phases of N submissions instead")
def main(
    copies: tuple[int, ...],
    sets: tuple[str, ...],
    designs: tuple[str, ...],
    jobs: int,
    image: str,
    seed: int,
    rounds: int,
    phase_count: int | None,
) -> None:
    if phase_count is not None:
        *rows, (rest, rest_seconds) = phase_breakdown(phase_count, seed)
        whole = sum(seconds for _, seconds in rows)
        click.echo(f"one complete submission at a time, {phase_count} times; per submission:")
        click.echo("| phase | ms | share |\n| --- | --- | --- |")
        for name, seconds in rows:
            click.echo(f"| {name} | {seconds * 1000:.1f} | {seconds / whole:.0%} |")
        click.echo(f"| the children and the judging | {whole * 1000:.1f} | 100% |")
        click.echo(
            f"{rest}: {rest_seconds * 1000:.0f} ms (a local worker's start, which a warm worker"
            " makes once: Python, torch, its warm-up; staging; reading the results)"
        )
        return
    examples = {
        "complete": [EXAMPLES / "complete"],
        "class": sorted(p for p in EXAMPLES.iterdir() if p.is_dir()),
    }
    designs = tuple(d for d in DESIGNS if d in designs) if designs else DESIGNS
    click.echo(f"{jobs} at a time; seconds per submission (wall time of the batch / count)")
    click.echo("| set | N | floor | container | warm | compute |")
    click.echo("| --- | --- | --- | --- | --- | --- |")
    for name in sets or ("complete", "class"):
        for count in copies:
            with tempfile.TemporaryDirectory(prefix="grader-bench-") as tmp:
                submissions = copies_of(examples[name], count, Path(tmp))
                measured = side_by_side(designs, submissions, jobs, image, seed, rounds)
                cells: dict[str, str] = {}
                floor = measured["floor"][0] / count if "floor" in measured else None
                if floor is not None:
                    cells["floor"] = f"{floor:.2f} s"
                for design in ("container", "warm"):
                    if design in measured:
                        cells[design] = ratio(measured[design][0] / count, floor)
                if "warm" in measured:
                    own = sum(p.seconds or 0 for r in measured["warm"][1] for p in r.problems)
                    cells["compute"] = ratio(own / jobs / count, floor)
                row = [cells.get(d, "-") for d in ("floor", "container", "warm", "compute")]
                click.echo(f"| {name} | {count} | " + " | ".join(row) + " |")
    complete = EXAMPLES / "complete"
    cold = latency(DockerBackend(image), complete, seed, warm=False)
    warm = latency(WarmBackend(image), complete, seed, warm=True)
    click.echo(f"latency of one complete submission: cold {cold:.2f} s, warm {warm:.2f} s")
    local, docker = (check_latency(complete, b) for b in ("local", "docker"))
    click.echo(
        f"`grader check` on it, the command's wall time: local {local:.2f} s, docker {docker:.2f} s"
    )


def ratio(seconds: float, floor: float | None) -> str:
    """Seconds, and their ratio to the floor when it was measured."""
    if floor is None:
        return f"{seconds:.2f} s"
    return f"{seconds:.2f} s ({seconds / floor:.2f}x)"


if __name__ == "__main__":
    main()
