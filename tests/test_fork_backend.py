"""The fork backend, `grader check`'s default: the worker forked from the grader's process, with
torch already imported. One's own code only: no boundary at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader import api
from grader.cli.main import cli
from grader.specs.paths import builtin_problems
from tests.conftest import ROOT

COMPLETE = ROOT / "submissions" / "complete"


def test_check_forks_the_worker_and_gives_full_marks() -> None:
    feedback = api.check(COMPLETE, backend=api.BackendName.fork)
    assert feedback.view.total == feedback.view.max_total > 0
    assert feedback.view.run.backend == "fork"


def test_the_forked_worker_runs_the_guard_and_leaves_the_grader_as_it_was(tmp_path: Path) -> None:
    """A forbidden call is refused in the forked worker as in any other, and the grader's own
    process is untouched by the guard: its torch still computes attention."""
    import torch

    mutant = builtin_problems() / "self_attention" / "mutants" / "uses_sdpa.py"
    (tmp_path / "self_attention.py").write_text(mutant.read_text())
    result = CliRunner().invoke(cli, ["check", str(tmp_path)])
    assert "on fork" in result.output and result.exit_code == 1, result.output
    assert "refused" in result.output or "forbidden" in result.output, result.output
    q = torch.randn(1, 1, 2, 4)
    assert torch.nn.functional.scaled_dot_product_attention(q, q, q).shape == q.shape


def test_a_worker_forked_ahead_and_never_used_leaves_nothing_behind() -> None:
    """`check` forks its worker before it reads the course; a check that ends before its job
    (an error in the course, say) kills that worker and removes its folder."""
    from grader.sandboxing.backends.fork import ForkBackend

    backend = ForkBackend()
    forked = backend._ready
    assert forked is not None and forked.home.is_dir()
    backend.close()
    assert not forked.home.exists()
    with pytest.raises(ChildProcessError):
        os.waitpid(forked.pid, os.WNOHANG)  # reaped: no longer a child of ours
