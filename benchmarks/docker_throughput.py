"""Fixed cost of the docker backend: submissions per minute with an empty job.

Each run is a full `DockerBackend.run`: container creation with every limit, the real worker
importing torch, the tar stream back, extraction, container removal. With no problems in the
job, what is measured is the per-submission overhead that the backend adds to grading.

    python benchmarks/docker_throughput.py --runs 10 --parallel 1 --parallel 2
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import click
import torch
from safetensors.torch import save_file

from grader.backends.base import Limits, WorkerJob
from grader.backends.docker import DockerBackend
from grader.image import DEFAULT_TAG


def empty_job(root: Path, index: int) -> WorkerJob:
    job_dir, sub_dir = root / f"job{index}", root / f"sub{index}"
    job_dir.mkdir()
    sub_dir.mkdir()
    (job_dir / "job.json").write_text(json.dumps({"problems": []}))
    save_file({"unused": torch.zeros(1)}, str(job_dir / "inputs.safetensors"))
    return WorkerJob(sub_dir, job_dir, root / f"out{index}", Limits.model_validate({}))


def measure(backend: DockerBackend, runs: int, parallel: int) -> dict[str, float]:
    """Run `runs` empty jobs, `parallel` at a time; per-run seconds and overall throughput."""
    with tempfile.TemporaryDirectory(prefix="grader-bench-") as tmp:
        jobs = [empty_job(Path(tmp), i) for i in range(runs)]

        def one(job: WorkerJob) -> float:
            start = time.monotonic()
            run = backend.run(job)
            if run.exit_code != 0 or run.fault or run.output_error:
                raise RuntimeError(f"run failed: {run}")
            return time.monotonic() - start

        start = time.monotonic()
        with ThreadPoolExecutor(parallel) as pool:
            seconds = sorted(pool.map(one, jobs))
        total = time.monotonic() - start
    return {
        "parallel": parallel,
        "runs": runs,
        "median_s": round(statistics.median(seconds), 3),
        "p95_s": round(seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))], 3),
        "per_minute": round(60 * runs / total, 1),
    }


@click.command()
@click.option("--image", default=DEFAULT_TAG, show_default=True)
@click.option("--runs", default=10, show_default=True)
@click.option("--parallel", multiple=True, type=int, default=(1, 2), show_default=True)
def main(image: str, runs: int, parallel: tuple[int, ...]) -> None:
    backend = DockerBackend(image)
    click.echo(json.dumps(backend.describe()))
    measure(backend, 1, 1)  # warm the page cache
    for level in parallel:
        click.echo(json.dumps(measure(backend, runs, level)))


if __name__ == "__main__":
    main()
