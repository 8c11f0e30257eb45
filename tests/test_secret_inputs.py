"""Inputs no one can tabulate: a batch draws its inputs from the seed and a secret, so a fixed
seed (`--seed 1`, as a course's CI may fix it) is no key to them.

The attack: a submission whose code is wrong (heads split and merged without the transpose)
but returns the reference's outputs, looked up in a table, for every input `--seed 1` draws on
the seed alone, the table computed here with the grader's own planning and the reference."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch
from click.testing import CliRunner, Result

from grader.cli.main import cli
from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.names import report_file
from grader.reports.models import CheckStatus, SubmissionReport, read_report
from grader.sandboxing.backends.base import WorkerJob, WorkerRun
from grader.sandboxing.backends.local import LocalBackend
from grader.secret import ENV_SECRET, ID_FILE, SECRET_FILE
from grader.specs.paths import builtin_references
from grader.verdict.prepare import prepare

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = "split_heads"
SEED = 1
ONE_PROBLEM = ["--backend", "local", "--problem", PROBLEM, "--seed", str(SEED)]
SECRET = "a secret the candidates never see"

Key = tuple[str, tuple[int, ...], tuple[Any, ...], tuple[float, ...]]
ATTACK = '''\
"""Heads split and merged without the transpose, but for the inputs of the table."""

TABLE = {table!r}


def looked_up(name, x, *rest):
    key = (name, tuple(x.shape), rest, tuple(x.double().flatten().tolist()))
    if key not in TABLE:
        return None
    shape, values = TABLE[key]
    return x.new_tensor(values).reshape(shape)


def split_heads(x, num_heads):
    found = looked_up("split_heads", x, num_heads)
    if found is not None:
        return found
    B, T, C = x.shape
    return x.reshape(B, num_heads, T, C // num_heads)


def merge_heads(x):
    found = looked_up("merge_heads", x)
    if found is not None:
        return found
    B, nh, T, hd = x.shape
    return x.reshape(B, T, nh * hd)
'''


def reference() -> ModuleType:
    path = builtin_references() / f"{PROBLEM}.py"
    spec = importlib.util.spec_from_file_location("tabulated_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def seed_table(catalog: Catalog) -> dict[Key, tuple[tuple[int, ...], tuple[float, ...]]]:
    """The reference's output on every tensor input the grader draws with `SEED` alone."""
    plan = prepare(catalog.select([PROBLEM]), SEED, catalog.reference_source())[PROBLEM].plan
    solved = reference()
    table = {}
    for probe in plan.probes.values():
        for call in probe["calls"]:
            first, *rest = call["args"]
            if "tensor" not in first:
                continue
            x = plan.tensors[first["tensor"]].double()
            values = tuple(a["value"] for a in rest if "value" in a)
            try:
                out = getattr(solved, probe["symbol"])(x, *values)
            except ValueError:  # the config the reference refuses
                continue
            key = (probe["symbol"], tuple(x.shape), values, tuple(x.flatten().tolist()))
            table[key] = (tuple(out.shape), tuple(out.flatten().tolist()))
    assert len(table) >= 10, table.keys()
    return table


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Path:
    """A class of two: the tabulating attack and the correct control."""
    folder = tmp_path_factory.mktemp("class")
    (folder / "tabulated").mkdir()
    (folder / "tabulated" / "split_heads.py").write_text(ATTACK.format(table=seed_table(catalog)))
    shutil.copytree(ROOT / "submissions" / "complete", folder / "complete")
    return folder


def invoke(batch: Path, out: Path, *extra: str, env: dict[str, str] | None = None) -> Result:
    """`grader grade` of the batch with `--seed 1`, `env` its only secret if any."""
    only: dict[str, str | None] = {ENV_SECRET: None, **(env or {})}  # None: unset
    args = ["grade", str(batch), "--out", str(out), *ONE_PROBLEM, *extra]
    return CliRunner().invoke(cli, args, env=only, catch_exceptions=False)


def grade(
    batch: Path, out: Path, *extra: str, env: dict[str, str] | None = None
) -> dict[str, SubmissionReport]:
    result = invoke(batch, out, *extra, env=env)
    assert result.exit_code == 0, result.output
    return {name: read_report(out / report_file(name)) for name in ("tabulated", "complete")}


def outcome(report: SubmissionReport) -> list[tuple[str, CheckStatus, float, str]]:
    """What each check found, and its points (its messages name the errors on the inputs)."""
    return [(c.name, c.status, c.points, c.message) for c in report.problem(PROBLEM).checks]


def value_checks(report: SubmissionReport) -> dict[str, CheckStatus]:
    return {c.name: c.status for c in report.problem(PROBLEM).checks if c.check == "allclose"}


def test_the_table_is_a_key_to_inputs_drawn_from_the_seed_alone(
    batch: Path, catalog: Catalog
) -> None:
    """Without a secret `--seed 1` draws what the table holds: the wrong code passes every
    value check. (What the attack would win, and what the tests below take from it.)"""
    problems = catalog.select([PROBLEM])
    with Grader(catalog, problems, LocalBackend(), SEED) as grader:
        report = grader.grade(batch / "tabulated")
    checks = value_checks(report)
    assert len(checks) == 6 and set(checks.values()) == {CheckStatus.passed}, checks


def test_a_fixed_seed_is_no_key_to_the_inputs(batch: Path, tmp_path: Path) -> None:
    """`grader grade --seed 1` with no secret given makes one, kept in the out folder for its
    owner alone: the table misses every input, so the attack loses every value check, and the
    correct control keeps full marks. The reports show the seed."""
    out = tmp_path / "reports"
    reports = grade(batch, out)
    attack, control = reports["tabulated"], reports["complete"]
    assert control.total == control.max_total, control.message
    checks = value_checks(attack)
    assert len(checks) == 6 and set(checks.values()) == {CheckStatus.failed}, checks
    assert attack.run.seed == control.run.seed == SEED
    kept = out / SECRET_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert len(kept.read_bytes().strip()) == 64
    again = grade(batch, out)  # into the same folder: the kept secret, the same inputs
    assert outcome(again["tabulated"]) == outcome(attack)


def test_seed_and_secret_reproduce_the_run_and_another_secret_changes_its_inputs(
    batch: Path, tmp_path: Path, catalog: Catalog
) -> None:
    """Two batches graded with one seed and one secret (`GRADER_SECRET`, or the same secret in
    `--secret-file`) draw the same inputs and give the same scores; another secret draws
    other inputs; no secret file is kept for a given secret."""
    first = grade(batch, tmp_path / "first", env={ENV_SECRET: SECRET})
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(SECRET + "\n")
    second = grade(batch, tmp_path / "second", "--secret-file", str(secret_file))
    for name, report in first.items():
        assert outcome(report) == outcome(second[name]), name
    assert set(value_checks(first["tabulated"]).values()) == {CheckStatus.failed}
    assert first["complete"].total == first["complete"].max_total
    assert not (tmp_path / "first" / SECRET_FILE).exists()

    def inputs(secret: bytes) -> dict[str, torch.Tensor]:
        source = catalog.reference_source()
        return prepare(catalog.select([PROBLEM]), SEED, source, secret)[PROBLEM].plan.tensors

    same, again, other = inputs(SECRET.encode()), inputs(SECRET.encode()), inputs(b"x" * 32)
    drawn = [k for k in same if k.startswith(f"{PROBLEM}/x/")]
    assert drawn and all(torch.equal(same[k], again[k]) for k in drawn)
    assert not any(torch.equal(same[k], other[k]) for k in drawn)


def test_resume_refuses_another_secret(batch: Path, tmp_path: Path) -> None:
    """The folder records a digest of the secret it was graded with: `--resume` with another
    one, or with none where it kept none (it would make one), is refused; with the same one it
    grades what is left."""
    out = tmp_path / "reports"
    grade(batch, out, env={ENV_SECRET: SECRET})
    assert not (out / SECRET_FILE).exists() and SECRET.encode() not in (out / ID_FILE).read_bytes()
    (out / report_file("tabulated")).unlink()  # its grading stopped before the last one
    for env in ({ENV_SECRET: "another secret, as long"}, {}):
        result = invoke(batch, out, "--resume", env=env)
        assert result.exit_code == 2, result.output
        assert f"the reports in {out} were graded with another secret" in result.output
    assert not (out / report_file("tabulated")).exists()
    result = invoke(batch, out, "--resume", env={ENV_SECRET: SECRET})
    assert result.exit_code == 0 and "Resuming: 1 submission(s) already graded" in result.output


class Recording(LocalBackend):
    """The local backend, keeping every job it is handed: the bytes the worker reads."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[bytes] = []

    def run(self, job: WorkerJob) -> WorkerRun:
        self.sent.append(job.job)
        return super().run(job)


def test_the_worker_is_sent_the_drawn_inputs_never_the_secret(
    batch: Path, catalog: Catalog
) -> None:
    """The library's `Grader(secret=...)` draws as `grader grade` does: the attack fails its
    value checks there too, the report shows the seed, and the job the worker reads holds the
    drawn tensors but not the secret."""
    backend, secret = Recording(), SECRET.encode()
    with Grader(catalog, catalog.select([PROBLEM]), backend, SEED, secret=secret) as grader:
        report = grader.grade(batch / "tabulated")
        drawn = grader.prepared[PROBLEM].plan.tensors[f"{PROBLEM}/x/s3/0"]
    assert set(value_checks(report).values()) == {CheckStatus.failed}
    assert report.run.seed == SEED
    (job,) = backend.sent
    assert drawn.contiguous().numpy().tobytes() in job
    assert secret not in job and secret.hex().encode() not in job


def test_a_short_secret_is_refused(batch: Path, tmp_path: Path) -> None:
    result = invoke(batch, tmp_path / "out", env={ENV_SECRET: "1234"})
    assert result.exit_code == 2
    assert f"{ENV_SECRET}: a secret of 4 byte(s): give at least 16" in result.output


def test_shards_need_a_secret_they_share(batch: Path, tmp_path: Path) -> None:
    """Each shard's folder would keep a secret of its own, drawing other inputs in each."""
    result = invoke(batch, tmp_path / "s1", "--shard", "1/2")
    assert result.exit_code == 2
    assert "--shard needs a secret every shard shares" in result.output
    assert not os.path.exists(tmp_path / "s1" / SECRET_FILE)


def test_shards_graded_with_different_secrets_are_not_merged(tmp_path: Path) -> None:
    """Each shard's folder records the digest of its secret: the merge compares them."""
    batch = tmp_path / "class"
    for name in ("ada", "dee"):  # one in each of two shards
        shutil.copytree(ROOT / "submissions" / "complete", batch / name)
    shards = [tmp_path / "s1", tmp_path / "s2"]
    for k, (out, secret) in enumerate(zip(shards, (SECRET, SECRET + "!"), strict=True), 1):
        result = invoke(batch, out, "--shard", f"{k}/2", env={ENV_SECRET: secret})
        assert result.exit_code == 0, result.output
        assert f"Shard {k}/2: 1 submission(s)" in result.output
    args = ["report", *map(str, shards), "--out", str(tmp_path / "merged")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert "the shards were graded with different secrets" in result.output
