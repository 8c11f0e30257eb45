"""Classroom 50: result.json and release-body.md rendered from a report, `grader classroom50
init`, and the autograder.py it writes, run the way Classroom 50's runner runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grader.errors import GraderError
from grader.outputs import Options, write_outputs
from grader.platforms.classroom50.results import MAX_BODY_CHARS
from grader.reports.models import CheckStatus, ProblemStatus, SubmissionReport
from tests.classroom50_format import validate_classroom50
from tests.conftest import ROOT, Installed, sh
from tests.reports import check, problem, sample_reports, submission
from tests.test_cli import run
from tests.test_formats import zeroed_problem
from tests.test_hostile_text import ESCAPES, MESSAGE

REPO = "https://github.com/ml-school/ml-2026-attention-alice"
TAG = "submit/2026-06-01T14-32-05Z-a1b2c3d"
RUNNER = {  # what Classroom 50's runner sets for an autograder
    "CLASSROOM": "ml-2026",
    "ASSIGNMENT": "attention",
    "ASSIGNMENT_TYPE": "individual",
    "SUBMISSION_TAG": TAG,
    "COMMIT_URL": f"{REPO}/commit/a1b2c3d",
    "RELEASE_URL": f"{REPO}/releases/tag/submit%2F2026-06-01T14-32-05Z-a1b2c3d",
    "REVIEW_URL": f"{REPO}/compare/0a0a0a0...a1b2c3d",
    "USERNAME": "alice",
    "OWNER": "alice",
    "PAGES_BASE_URL": "https://ml-school.github.io/classroom50",
    "GITHUB_REPOSITORY": "ml-school/ml-2026-attention-alice",
    "GITHUB_SHA": "a1b2c3d",
    "GITHUB_ACTOR": "alice",
}
Rendered = tuple[dict[str, Any], str, str]  # result.json, release-body.md, $GITHUB_OUTPUT


def rendered(report: SubmissionReport, out: Path, environ: dict[str, str] = RUNNER) -> Rendered:
    output = out / "github_output"
    echoed: list[str] = []
    opts = Options(out, environ={**environ, "GITHUB_OUTPUT": str(output)}, echo=echoed.append)
    write_outputs([report], ["classroom50"], opts)
    result = json.loads((out / "classroom50" / "result.json").read_text(encoding="utf-8"))
    body = (out / "classroom50" / "release-body.md").read_text(encoding="utf-8")
    return result, body, output.read_text(encoding="utf-8") + "".join(echoed)


def test_results_follow_the_published_schema(tmp_path: Path) -> None:
    reports = sample_reports()
    states: list[str] = []
    for report in [*reports, zeroed_problem(reports[1])]:
        result, body, output = rendered(report, tmp_path / f"{len(states)}")
        validate_classroom50(result)
        assert {k: result[k] for k in ("classroom", "assignment", "owner", "submission")} == {
            "classroom": "ml-2026",
            "assignment": "attention",
            "owner": "alice",
            "submission": TAG,
        }
        assert result["max-score"] == report.max_total and result["score"] == report.total
        names = [t["test-name"] for t in result["tests"]]
        assert any("hidden check 1" in n for n in names)
        assert "SECRET" not in json.dumps(result) and "SECRET" not in body
        assert body.startswith(f"### attention-grader: {result['score']}/{result['max-score']}")
        state, summary = output.splitlines()
        states.append(state)
        assert summary.startswith("summary=attention-grader: ")
    assert states == [
        "status=failure",  # full marks on two problems, a third not attempted
        "status=failure",
        "status=error",  # a grader fault
        "status=failure",
    ]


def test_a_forbidden_api_fails_the_checks_it_zeroed(tmp_path: Path) -> None:
    result, _, _ = rendered(sample_reports()[1], tmp_path)
    zeroed = [t for t in result["tests"] if t["test-name"].startswith("2.")]
    assert zeroed and not any(t["passed"] or t["score"] for t in zeroed)


def test_points_that_are_not_whole_count_in_parts(tmp_path: Path) -> None:
    checks = [check("a", CheckStatus.passed, 0.5), check("b", CheckStatus.failed, 1.25)]
    report = submission("parts", [problem("split_heads", ProblemStatus.graded, checks, 1.75)], 1)
    result, body, output = rendered(report, tmp_path)
    validate_classroom50(result)
    assert (result["score"], result["max-score"]) == (2, 7)  # quarter points
    assert "4 parts make one point" in body
    assert "status=failure" in output


def test_names_are_cut_to_100_bytes_without_colliding(tmp_path: Path) -> None:
    stem = "é\x1b[2J\t\n" * 60
    checks = [check(f"{stem}{i}", CheckStatus.passed, 1) for i in range(12)]
    report = submission("long", [problem("split_heads", ProblemStatus.graded, checks, 12)], 1)
    result, _, output = rendered(report, tmp_path)
    validate_classroom50(result)  # distinct, at most 100 bytes, no control character
    assert all(t["test-name"].endswith("…") for t in result["tests"])
    assert "status=success" in output


def test_hostile_text_stays_text_in_the_release(tmp_path: Path) -> None:
    hostile = MESSAGE + " @octocat https://evil.example/x " + "x" * 300_000
    checks = [check("matches", CheckStatus.failed, 3, message=hostile)]
    solved = problem("split_heads", ProblemStatus.crashed, checks, 3, hostile)
    report = submission(MESSAGE, [solved], 1, hostile)
    result, body, output = rendered(report, tmp_path, {**RUNNER, "OWNER": "alice\nstatus=x"})
    validate_classroom50(result)
    assert len(body) <= MAX_BODY_CHARS + 100 and body.endswith("than a Release can show.)\n")
    assert "<script>" not in body and "\n# Heading" not in body and "**bold**" not in body
    assert "@octocat" not in body and "https://evil" not in body
    assert not any(c in body for c in ESCAPES)
    assert len(output.splitlines()) == 2  # status= and summary=, whatever the candidate wrote


def test_outside_the_runner_the_identity_is_a_placeholder(tmp_path: Path) -> None:
    result, _, output = rendered(sample_reports()[0], tmp_path, {})
    validate_classroom50(result)
    assert result["submission"] == "submit/unknown" and result["owner"] == "unknown"
    assert "CLASSROOM, ASSIGNMENT, SUBMISSION_TAG, COMMIT_URL, RELEASE_URL, OWNER unset" in output
    with pytest.raises(GraderError, match="exactly one submission"):
        write_outputs(sample_reports(), ["classroom50"], Options(tmp_path, environ={}))


def test_init_writes_the_autograder_its_kit_and_runtime(tmp_path: Path) -> None:
    folder = tmp_path / "ml-2026" / "autograders" / "attention"
    args = ["classroom50", "init", str(folder), "--grader-url", "https://x.test/g.git"]
    code, out = run(*args, "--ref", "v1", "--problem", "split_heads")
    assert code == 0, out
    assert "--runtime" in out
    script = (folder / "autograder.py").read_text()
    compile(script, "autograder.py", "exec")
    assert "'attention-grader @ git+https://x.test/g.git@v1'" in script
    assert "'torch==2.13.0'" in script and "download.pytorch.org/whl/cpu" in script
    assert json.loads((folder / "runtime.json").read_text()) == {
        "runs-on": "ubuntu-latest",
        "python": "3.11",
    }
    assert sorted(p.name for p in (folder / "kit" / "problems").iterdir()) == ["split_heads"]
    assert not list((folder / "kit").rglob("reference*.py"))  # no reference solution
    assert run(*args)[0] != 0  # never over an existing autograder
    assert run(*args, "--force")[0] == 0
    assert len(list((folder / "kit" / "problems").iterdir())) == 11  # the whole course
    assert run(*args, "--force", "--problem", "no_such_problem")[0] != 0
    assert "slug" in run(*args[:2], str(tmp_path / "Attention_Week1"), *args[3:])[1]
    assert "version" in run(*args, "--force", "--python", "bad version!")[1]


def checkout(case: str, folder: Path) -> Path:
    """A student's repository as the runner checks it out: control files and a submission."""
    (folder / ".github" / "workflows").mkdir(parents=True)
    (folder / ".github" / "workflows" / "autograde.yaml").write_text("on: push\n")
    (folder / ".classroom50.yaml").write_text("classroom: ml-2026\nassignment: attention\n")
    if case in ("complete", "classic_mistakes"):
        for path in (ROOT / "submissions" / case).iterdir():
            shutil.copy(path, folder / path.name)
    elif case == "syntax_error":
        shutil.copy(ROOT / "submissions" / "complete" / "mha_by_loop.py", folder)
        (folder / "split_heads.py").write_text("def split_heads(x, n_head:\n    return x\n")
    (folder / "result.json").symlink_to(folder / "stolen")  # left by the student: not followed
    return folder


@pytest.fixture(scope="module")
def assignment(installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An assignment's folder written by the installed grader: two problems of the course."""
    bin_dir, work, env = installed
    folder = tmp_path_factory.mktemp("classroom50") / "ml-2026" / "autograders" / "attention"
    sh([str(bin_dir / "grader"), "classroom50", "init", str(folder), "--grader-url",
        "https://x.test/g.git", "--problem", "split_heads", "--problem", "mha_by_loop"],
       work, env)  # fmt: skip
    return folder


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("case", "status", "said"),
    [
        ("complete", "success", ["### attention-grader: 17/17"]),
        ("classic_mistakes", "failure", ["named mistake: heads split with view", "no causal"]),
        ("syntax_error", "failure", ["import error", "SyntaxError"]),
        ("empty", "failure", ["no problem file found", "Not attempted (17 points)"]),
    ],
)
def test_the_autograder_grades_a_checkout_as_the_runner_runs_it(
    installed: Installed, assignment: Path, tmp_path: Path, case: str, status: str, said: list[str]
) -> None:
    """The runner's Python runs autograder.py in the checkout with the runner's environment.
    GRADER_PYTHON (the wheel's virtualenv) stands in for the install step, which needs PyTorch's
    own index; GRADER_ACCOUNT is empty: no account is made on this machine."""
    bin_dir, _, env = installed
    student = checkout(case, tmp_path / "ml-2026-attention-alice")
    output = tmp_path / "github_output"
    output.touch()
    runner = {**env, **RUNNER, "GITHUB_OUTPUT": str(output), "RUNNER_TEMP": str(tmp_path)}
    runner |= {"GRADER_PYTHON": str(bin_dir / "python"), "GRADER_ACCOUNT": ""}
    proc = subprocess.run(
        [sys.executable, str(assignment / "autograder.py")],
        cwd=student,
        env=runner,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "runs as this job's own user" in proc.stdout
    result = json.loads((student / "result.json").read_text(encoding="utf-8"))
    validate_classroom50(result)
    assert result["max-score"] == 17
    body = (student / "release-body.md").read_text(encoding="utf-8")
    for text in said:
        assert text in body, body
    assert output.read_text().splitlines()[0] == f"status={status}"
    assert not (student / "stolen").exists()
