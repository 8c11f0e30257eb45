"""Courses as instructors make them: a folder outside the package with problems of its own and
built-in ones, its `[[problems]]` list, and the candidate kit `grader release` writes."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from safetensors.torch import load_file
from torch import nn

from grader.cli.main import cli
from grader.courses.catalog import Catalog
from grader.courses.course import open_course
from grader.specs.course import CourseError
from grader.specs.paths import builtin_problems, builtin_references
from grader.specs.problem import Visibility, load_spec
from grader.verdict.checks.base import CHECKS, ConfigParams
from grader.verdict.checks.modules import DistinctHeadsParams
from grader.verdict.checks.sdpa import SetupAllCloseParams
from grader.verdict.checks.structure import OneConfigParams
from grader.verdict.checks.values import AllCloseParams
from grader.verdict.plan import Plan
from grader.verdict.reference import LiveReference
from tests.conftest import ROOT

EXAMPLE = ROOT / "tests" / "course_example"
COMPLETE = ROOT / "submissions" / "complete"


def run(*args: str, ok: tuple[int, ...] = (0,)) -> str:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code in ok, result.output
    return result.output


@pytest.fixture
def course(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "course"))


def test_a_course_folder_sets_its_problems_with_its_points(course: Path) -> None:
    opened = open_course(course)
    assert list(opened.catalog.problems) == ["doubling", "split_heads"]
    split = opened.catalog.problems["split_heads"].spec
    assert split.max_score == pytest.approx(20)
    builtin = load_spec(builtin_problems() / "split_heads" / "spec.toml")
    float64 = "split_heads works in float64"
    assert {c.name: c.visibility for c in builtin.checks}[float64] is Visibility.hidden
    assert {c.name: c.visibility for c in split.checks}[float64] is Visibility.visible
    assert open_course(course / "course.toml").catalog.problems.keys() == {
        "doubling",
        "split_heads",
    }
    listed = json.loads(run("problems", "--course", str(course), "--json"))
    assert [problem["id"] for problem in listed] == ["doubling", "split_heads"]


def test_the_environment_names_the_course(course: Path) -> None:
    result = CliRunner().invoke(cli, ["problems"], env={"GRADER_COURSE": str(course)})
    assert (
        result.exit_code == 0 and "doubling" in result.output and "mha_by_loop" not in result.output
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[[problems]]\nid = "nope"\n', "problems.0.id: no problem 'nope'"),
        ('[[problems]]\nid = "split_heads"\nfrom = "elsewhere"\n', "problems.0.from"),
        ('[[problems]]\nid = "doubling"\nweight = 2\n', "problems.0.weight: not a course field"),
        (
            '[[problems]]\nid = "doubling"\n[problems.checks.nosuch]\npoints = 1\n',
            "no check 'nosuch'",
        ),
        ('[[problems]]\nid = "doubling"\n[[problems]]\nid = "doubling"\n', "listed twice"),
    ],
)
def test_course_file_errors_name_the_file_and_field(course: Path, text: str, said: str) -> None:
    (course / "course.toml").write_text(text)
    with pytest.raises(CourseError, match=r"course\.toml") as caught:
        open_course(course)
    assert said in str(caught.value)


BROKEN: dict[str, tuple[str, Callable[[str], str], str]] = {
    "unknown config": (
        "problems/doubling/spec.toml",
        lambda text: text.replace('configs = ["small"] }', 'configs = ["smal"] }', 1),
        "spec.toml: checks.0.params.configs: no config 'smal' (the spec's configs: small, wide)",
    ),
    "reference cannot import": (
        "reference_solutions/doubling.py",
        lambda text: text + "import no_such_module\n",
        "doubling.py: cannot be imported (line 7): ModuleNotFoundError: "
        "No module named 'no_such_module'",
    ),
    "reference raises": (
        "reference_solutions/doubling.py",
        lambda text: text.replace("doubled_by_the_reference = x.mul(2.0)", "1 / 0"),
        "doubling: the reference failed probe p0: ZeroDivisionError: division by zero",
    ),
}


@pytest.mark.parametrize("broken", BROKEN, ids=str)
def test_an_error_in_a_course_is_one_line_naming_its_file(course: Path, broken: str) -> None:
    """The course's author is told what and where in one line, exit 2: no traceback."""
    name, change, said = BROKEN[broken]
    path = course / name
    path.write_text(change(path.read_text()))
    result = CliRunner().invoke(cli, ["validate", "--course", str(course)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and said in result.output, result.output
    assert [line for line in result.output.splitlines() if line.startswith("Error:")], result.output


def test_a_reference_failing_to_build_is_one_line(tmp_path: Path) -> None:
    course = tmp_path / "course"
    (course / "problems").mkdir(parents=True)
    (course / "course.toml").write_text('name = "one module"\n')
    shutil.copytree(builtin_problems() / "self_attention", course / "problems" / "self_attention")
    reference = (builtin_references() / "self_attention.py").read_text()
    broken = reference.replace("super().__init__()", "super().__init__()\n        1 / 0", 1)
    (course / "reference_solutions").mkdir()
    (course / "reference_solutions" / "self_attention.py").write_text(broken)
    result = CliRunner().invoke(cli, ["validate", "--course", str(course)])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        "Error: self_attention: the reference's SelfAttention(embedding_dim=16) raised "
        "ZeroDivisionError: division by zero"
    ), result.output


def test_a_problem_with_its_own_checks_loads_twice_in_one_process(course: Path) -> None:
    first = Catalog(course / "problems")
    second = Catalog(course / "problems")
    assert [type(c).__name__ for c in first.problems["doubling"].checks()] == [
        "AllClose",
        "TwiceTheInput",
        "AllClose",
    ]
    assert second.problems["doubling"].own_checks.keys() == {"twice_the_input"}


def test_a_check_reads_the_params_model_its_class_names(course: Path) -> None:
    """`class Mine(Check[MyParams])` is all a check says of its params, also through a generic
    base (`Closeness[P]`, `Inspecting[P]`) and in a problem's own `checks.py`."""
    doubling = Catalog(course / "problems").problems["doubling"]
    own = {c.spec.check: c for c in doubling.checks()}["twice_the_input"]
    assert isinstance(own.params, ConfigParams)
    assert CHECKS["allclose_after_setup"].params_model is SetupAllCloseParams
    assert CHECKS["allclose"].params_model is AllCloseParams
    assert CHECKS["param_count"].params_model is OneConfigParams
    assert CHECKS["distinct_heads"].params_model is DistinctHeadsParams


@pytest.mark.timeout(300)
def test_a_course_is_validated_and_graded_with_exactly_its_problems(
    course: Path, tmp_path: Path
) -> None:
    out = run("validate", "--course", str(course), "--jobs", "2")
    assert "accepted" in out and "triple" in out and " 0 failed" in out
    assert not re.search(r"\d\.\d{3}", out), out  # split_heads' rescaled points, rounded
    submission = tmp_path / "submission"
    shutil.copytree(COMPLETE, submission)
    shutil.copyfile(
        course / "problems" / "doubling" / "accepted" / "plus.py", submission / "doubling.py"
    )
    run("grade", str(submission), "--course", str(course), "--backend", "local", "--out",
        str(tmp_path / "out"))  # fmt: skip
    report = json.loads((tmp_path / "out" / "submission.json").read_text())
    assert [p["problem"] for p in report["problems"]] == ["doubling", "split_heads"]
    assert report["total"] == report["max_total"] == pytest.approx(26)


def kit_text(kit: Path) -> str:
    """Every file of the kit as text (tensors by their names and values), but the statements
    and starters, which the instructor wrote for candidates."""
    texts = []
    given = {"statement.md", "starter.py"}
    for path in sorted(p for p in kit.rglob("*") if p.is_file() and p.name not in given):
        if path.suffix == ".safetensors":
            texts += [f"{k} {v.flatten().tolist()}" for k, v in load_file(path).items()]
        else:
            texts.append(path.read_text(encoding="utf-8"))
    return "\n".join(texts)


@pytest.mark.timeout(300)
def test_the_kit_holds_no_reference_line_and_no_hidden_check(course: Path, tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    for source, out in ((None, tmp_path / "builtin_kit"), (course, kit)):
        run(
            "release",
            "--out",
            str(out),
            "--seed",
            "11",
            *(["--course", str(source)] if source else []),
        )
        opened = open_course(source)
        text = kit_text(out)
        for problem in opened.catalog.problems.values():
            shipped = out / "problems" / problem.spec.id
            assert (shipped / "statement.md").read_text() == problem.statement
            assert (shipped / "starter.py").read_text() == problem.starter
            for line in problem.reference_file.read_text().splitlines():
                code = line.strip()
                if code and not code.startswith(("import ", "from ")):
                    assert code not in text, (problem.spec.id, line)
            for check in problem.spec.checks:
                if check.visibility is not Visibility.visible:
                    assert check.name not in text, (problem.spec.id, check.name)
                    if check.params:
                        assert json.dumps(check.params) not in text
        # what it tells of the problems is what the course tells: points, hidden checks
        given = ["--course", str(source)] if source else []
        assert run("problems", "--course", str(out)) == run("problems", *given)
        some = next(iter(opened.catalog.problems))
        shown = run("show", some, "--course", str(out)).splitlines()
        told = run("show", some, *given).splitlines()
        assert [x for x in shown if "oints" in x] == [x for x in told if "oints" in x]
    # no input of a hidden probe: the wide config only the hidden check asks for
    hidden_only = Plan(open_course(course).catalog.problems["doubling"].spec, 11,
                       LiveReference(open_course(course).catalog.reference_file))  # fmt: skip
    key = hidden_only.tensor_argument(hidden_only.args(hidden_only.spec.config("wide")), 0)[
        "tensor"
    ]
    assert (
        key not in text and str(hidden_only.tensors[key].flatten().tolist()[:4])[1:-1] not in text
    )
    # nor the config itself: its id, shapes and rationale are the hidden check's
    shipped = json.loads((kit / "problems" / "doubling" / "problem.json").read_text())
    assert [c["id"] for c in shipped["configs"]] == ["small"]
    # nor the course's diagnosis form, which computes the reference when no mistake is on
    assert shipped["diagnosis"] is None and not (kit / "problems/doubling/diagnosis.py").exists()
    assert "tripled" not in kit_text(kit)
    builtin = {p.spec.id: p.spec for p in open_course(None).catalog.problems.values()}
    dropped = {
        problem: {c.id for c in spec.configs}
        - {c["id"] for c in kit_configs(tmp_path / "builtin_kit", problem)}
        for problem, spec in builtin.items()
    }
    assert any(dropped.values()), dropped  # the built-in course has hidden-only configs too
    for problem_id, ids in dropped.items():  # their rationale goes with them
        shipped_configs = kit_configs(tmp_path / "builtin_kit", problem_id)
        problem_text = (tmp_path / "builtin_kit/problems" / problem_id / "problem.json").read_text()
        for config in (builtin[problem_id].config(i) for i in ids):
            if config.why and config.why not in {c.get("why") for c in shipped_configs}:
                assert json.dumps(config.why) not in problem_text, (problem_id, config.id)


def kit_configs(kit: Path, problem: str) -> list[dict[str, Any]]:
    shipped = json.loads((kit / "problems" / problem / "problem.json").read_text())
    configs: list[dict[str, Any]] = shipped["configs"]
    return configs


@pytest.mark.timeout(300)
def test_check_with_the_kit_alone_passes_a_correct_submission(course: Path, tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    run("release", "--course", str(course), "--out", str(kit))
    submission = tmp_path / "submission"
    shutil.copytree(COMPLETE, submission)
    shutil.copyfile(
        course / "problems" / "doubling" / "accepted" / "plus.py", submission / "doubling.py"
    )
    out = run("check", str(submission), "--course", str(kit))
    assert "+ 1 hidden check(s) worth 3 point(s)" in out  # run with exit status 0: all passed
    shutil.copyfile(
        course / "problems" / "doubling" / "mutants" / "triple.py", submission / "doubling.py"
    )
    shutil.copyfile(
        ROOT / "submissions" / "classic_mistakes" / "split_heads.py", submission / "split_heads.py"
    )
    out = run("check", str(submission), "--course", str(kit), ok=(1,))
    assert "not twice the input" in out and "named mistake: heads split with view" in out
    assert "candidate kit" in run("validate", "--course", str(kit), ok=(2,))
    listing = (  # what `check` reads before its worker starts: the kit, without torch
        "import sys; from pathlib import Path; from grader.courses.course import open_course; "
        "found = open_course(Path(sys.argv[1]), checked=False).catalog; "
        "print('torch' in sys.modules, found.is_kit, *found.problems)"
    )
    unchecked = subprocess.run(
        [sys.executable, "-c", listing, str(kit)], capture_output=True, text=True, check=True
    )
    assert unchecked.stdout.split() == ["False", "True", "doubling", "split_heads"]


@pytest.mark.timeout(300)
def test_a_scaffolded_problem_validates_in_a_new_course(tmp_path: Path) -> None:
    course = tmp_path / "new_course"
    run("new", "scaled", "--course", str(course), "--symbol", "halve")
    assert "scaled" in run("problems", "--course", str(course))
    out = run("validate", "--course", str(course), "--jobs", "2")
    assert "4 passed, 0 failed (1 problems, 1 mutants)" in out
    assert "exists" in run("new", "scaled", "--course", str(course), ok=(2,))
    run("new", "scaled_layer", "--module", "--course", str(course))
    spec = (course / "problems" / "scaled_layer" / "spec.toml").read_text()
    assert 'kind = "module"' in spec and 'symbols = ["ScaledLayer"]' in spec
    assert "number = 2" in spec  # the next one: two problems never share a number
    out = run("validate", "scaled_layer", "--course", str(course), "--jobs", "2")
    assert "4 passed, 0 failed (1 problems, 1 mutants)" in out
    spec_file = course / "problems" / "scaled_layer" / "spec.toml"
    spec_file.write_text(spec.replace("number = 2", "number = 1"))
    assert "number: 1 is also scaled's" in run("problems", "--course", str(course), ok=(2,))


def test_the_gradescope_zip_packs_the_full_course(course: Path, tmp_path: Path) -> None:
    run("gradescope", "build", "--course", str(course), "--out", str(tmp_path / "a.zip"))
    with zipfile.ZipFile(tmp_path / "a.zip") as archive:
        names = set(archive.namelist())
        script = archive.read("run_autograder").decode()
    assert {"course/course.toml", "course/reference_solutions/doubling.py"} <= names
    assert "grader/course.toml" in names
    assert "--course /autograder/source/course" in script
    run("gradescope", "build", "--out", str(tmp_path / "b.zip"))
    with zipfile.ZipFile(tmp_path / "b.zip") as archive:
        assert not any(n.startswith("course/") for n in archive.namelist())


def test_the_live_reference_builds_a_module_once_for_its_parameters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = LiveReference(lambda problem: builtin_references() / f"{problem}.py")
    built: list[dict[str, Any]] = []
    build = source.module

    def counted(problem: str, symbol: str | None, init: dict[str, Any]) -> nn.Module:
        built.append(init)
        return build(problem, symbol, init)

    monkeypatch.setattr(source, "module", counted)
    init = {"n_embd": 8, "n_head": 2, "block_size": 4, "dropout": 0.0}
    first = source.parameters("causal_self_attention", None, init)
    assert source.parameters("causal_self_attention", None, dict(init)) == first
    assert len(built) == 1


def test_a_course_names_its_own_mistakes(course: Path) -> None:
    """The course's form (in the problem's checks.py) names the triple mutant's mistake, and a
    form that raises is told to the course's author, not swallowed."""
    assert "17 passed, 0 failed" in run("validate", "--course", str(course), "--jobs", "2")
    checks = course / "problems" / "doubling" / "diagnosis.py"
    good = 'return args[0] * (3 if knobs.mistake == "tripled" else 2)'
    checks.write_text(checks.read_text().replace(good, "raise KeyError('oops')"))
    out = CliRunner(env={"COLUMNS": "400"}).invoke(
        cli, ["validate", "doubling", "--course", str(course)]
    )
    assert (
        out.exit_code == 1 and "the diagnosis form 'doubling' raised KeyError('oops')" in out.output
    )


def test_a_form_in_the_kits_checks_file_is_refused(course: Path) -> None:
    """checks.py goes into the kit: a form there would hand candidates the reference."""
    folder = course / "problems" / "doubling"
    checks = folder / "checks.py"
    checks.write_text(checks.read_text() + (folder / "diagnosis.py").read_text())
    (folder / "diagnosis.py").unlink()
    out = CliRunner().invoke(cli, ["validate", "--course", str(course)])
    assert out.exit_code == 2 and "a diagnosis form goes in diagnosis.py" in out.output, out.output


@pytest.mark.timeout(300)
def test_the_kit_reads_as_a_candidate_needs_it_and_is_readable_by_all(
    course: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Released with a strict umask, a kit shared on a machine is readable by every account
    (safetensors wrote its file 0600); its README's commands run as written, from where the
    kit is; the closing message names the kit as it was typed."""
    monkeypatch.chdir(tmp_path)
    umask = os.umask(0o077)
    try:
        said = run("release", "--course", str(course), "--out", "kit")
    finally:
        os.umask(umask)
    assert said.startswith("wrote the candidate kit kit: `grader check --course kit` runs it")
    assert "kit/README.md tells candidates" in said and str(tmp_path) not in said
    kit = tmp_path / "kit"
    for path in (kit, *kit.rglob("*")):
        assert stat.S_IMODE(path.stat().st_mode) == (0o755 if path.is_dir() else 0o644), path
    readme = (kit / "README.md").read_text()
    assert "| `doubling` |" not in readme and "`doubling`: " in readme
    assert "| `doubling.py` |" in readme and "| 1 (3 pts) |" in readme  # its hidden check
    commands = readme.split("```bash\n")[1].split("```")[0].splitlines()
    assert commands[-1] == "grader check my-work --course kit"
    for line in commands:
        run(*shlex.split(line)[1:], ok=(0, 1))  # check: 1, the starter fails its checks
    assert (tmp_path / "my-work" / "doubling.py").is_file()
