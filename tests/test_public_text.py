"""Candidate-facing text is built from the grader's own fields: whatever a forged results record
carries (a probe id, a dtype, a device, type and parameter names, shapes, counts, an error's
place) reaches the instructor's report, and no candidate-facing rendering of it."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from rich.console import Console
from safetensors.torch import save

from grader.courses.catalog import Catalog
from grader.grade import Grader
from grader.platforms.classroom.results import classroom_result
from grader.platforms.gradescope.results import gradescope_results
from grader.reports.html import render_feedback_html
from grader.reports.junit import render_junit
from grader.reports.markdown import candidate_feedback
from grader.reports.models import (
    AttentionPattern,
    CheckReport,
    CheckStatus,
    ProblemStatus,
    SubmissionReport,
)
from grader.reports.redact import candidate_view, public_check
from grader.reports.terminal import print_feedback
from grader.sandboxing import owntext
from grader.sandboxing.owntext import (
    own_count,
    own_name,
    own_names,
    own_row_sum,
    own_shape,
    own_value,
)
from grader.sandboxing.results import ProbeData, ProbeResult, ProblemExit, ProblemRun, read_problem
from grader.specs.problem import Visibility
from grader.verdict.checks.scope import Sources
from grader.verdict.judge import judge_problem
from grader.verdict.prepare import Prepared, prepare
from sandbox.protocol import RESULTS_FILE, Probe, sealer
from tests.conftest import ROOT
from tests.reports import submission
from tests.test_results import record

SECRET = "Secret7331"  # what a forged string carries
NUMBER = 7331  # and a forged number
ENDED = ProblemExit(exit_code=0, signal=None, timed_out=False, seconds=1.0)
CAUSAL, WRAPPER = "causal_self_attention", "mha_wrapper"
UNREADABLE = (
    "the candidate's process left results the grader cannot read; checks that finished count"
)
Edit = Callable[[dict[str, Any], dict[str, torch.Tensor], Probe], None]


@pytest.fixture(scope="module")
def prepared(catalog: Catalog) -> dict[str, Prepared]:
    return prepare(catalog.select([CAUSAL, WRAPPER]), 0, catalog.reference_source())


def forged(prepared: Prepared, edit: Edit) -> ProblemRun:
    """The reference's results, each probe's record edited as a candidate's process could."""
    run = ProblemRun(prepared.problem.spec.id, ENDED, started=True, imported=True)
    for probe_id, reference in prepared.reference.items():
        data, tensors = reference.data.model_dump(mode="json"), dict(reference.tensors)
        edit(data, tensors, prepared.plan.probes[probe_id])
        run.probes[probe_id] = ProbeResult(ProbeData.model_validate(data), tensors)
    return run


def read_forged(prepared: Prepared, edit: Edit, root: Path) -> ProblemRun:
    """The reference's results written as a results file, each record edited, read back."""
    problem = prepared.problem.spec.id
    (root / problem).mkdir()
    records: list[bytes] = []
    seal = sealer(prepared.plan.key, problem, "job")
    for probe_id, reference in prepared.reference.items():
        data = reference.data.model_dump(mode="json")
        tensors = {key: value.contiguous() for key, value in reference.tensors.items()}
        edit(data, tensors, prepared.plan.probes[probe_id])
        sealed = record(json.dumps(data), save(tensors), len(records), seal)
        records.append(sealed)
    (root / problem / RESULTS_FILE).write_bytes(b"".join(records))
    run = read_problem(root, problem, prepared.plan.probes, seal)
    run.exit, run.started, run.imported = ENDED, True, True
    return run


def judged(prepared: Prepared, run: ProblemRun) -> SubmissionReport:
    """The run judged with the reference's file as the candidate's, every check visible: each
    public message reaches the candidate's view."""
    spec = prepared.problem.spec
    sources = Sources({spec.entry: prepared.problem.reference_file.read_bytes()})
    report = judge_problem(prepared, run, sources)
    shown = [c.model_copy(update={"visibility": Visibility.visible}) for c in report.checks]
    return submission("forged", [report.model_copy(update={"checks": shown})], 0)


def candidate_texts(report: SubmissionReport) -> dict[str, str]:
    """Every candidate-facing rendering of a report."""
    view = candidate_view(report)
    console = Console(record=True, width=200)
    print_feedback(view, {}, console)
    return {
        "view": view.model_dump_json(),
        "markdown": candidate_feedback(view),
        "html": render_feedback_html(view),
        "junit": render_junit([view]),
        "gradescope": json.dumps(gradescope_results(report)),
        "classroom": json.dumps(classroom_result(view)),
        "terminal": console.export_text(),
    }


def public_text(report: SubmissionReport) -> str:
    return "\n".join(candidate_texts(report).values())


def assert_withheld(report: SubmissionReport, secret: str, instructors: bool = True) -> None:
    """`secret` is in the instructor's report (if the grader's words quote it), in no
    candidate-facing rendering, and nothing is the grader's fault."""
    problem = report.problems[0]
    assert problem.status is not ProblemStatus.grader_error, problem.message
    if instructors:
        assert secret in report.model_dump_json()
    for name, text in candidate_texts(report).items():
        at = text.find(secret)
        assert at < 0, (name, text[max(0, at - 300) : at + 100])


def tensor_outputs(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [o for call in data["calls"] for o in call["outputs"] if o["kind"] == "tensor"]


def modules(data: dict[str, Any]) -> list[dict[str, Any]]:
    return list((data["inspect"] or {}).get("modules", []))


# -- edits a candidate's process could make to its records


def container(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    for call in data["calls"]:
        if call["container"] is None:
            call.update(container=f"{SECRET}Tuple", length=2, outputs=call["outputs"] * 2)


def length(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    for call in data["calls"]:
        call.update(container="tuple", length=NUMBER, outputs=(call["outputs"] * 16)[:16])


def shape(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    for out in tensor_outputs(data):
        out.update(shape=[*out["shape"][:-1], NUMBER], key=None)


def names(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    """Parameters, attributes and submodules of forged names and shapes, and values that do
    not match (so that the value checks name the weights they could not load)."""
    tensors.update({key: torch.zeros_like(value) for key, value in tensors.items()})
    if data["inspect"] is not None:
        param = {"name": f"{SECRET}.weight", "shape": [NUMBER], "dtype": "float32"}
        data["inspect"]["params"].append({**param, "requires_grad": True, "storage": 10_000})
        data["inspect"]["tensor_attrs"].append(SECRET)
        data["inspect"]["modules"].append({"name": SECRET, "type": "Linear", "instance": 10_000})
    if data["load"] is not None:
        asked = next(iter(probe.get("weights") or {}))
        data["load"]["unexpected"].append(f"{SECRET}.weight")
        data["load"]["mismatched"].append({"name": asked, "expected": [NUMBER], "got": [NUMBER]})


def buffers(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    for buffer in (data["inspect"] or {}).get("buffers", []):
        buffer["name"] = SECRET


def attributes(value: object, dropout: dict[str, object]) -> Edit:
    def edit(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
        attrs = (data["inspect"] or {}).get("attrs", {})
        for name, was in attrs.items():
            attrs[name] = dropout if isinstance(was, dict) else value

    return edit


def raising(file: str, line: int, call: int = 0) -> Edit:
    def edit(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
        frame = {"file": file, "line": line, "code": "raise ValueError(x.shape)"}
        error = {"stage": "call", "call": call, "type": "ValueError", "message": str(NUMBER)}
        data.update(calls=[], error={**error, "frames": [frame]})

    return edit


def gradients(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    for call in data["calls"]:
        for key in call["grads"].values():
            if key is not None:
                tensors[key] = torch.zeros(NUMBER)


def module_type(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    for module in modules(data):
        if module["name"] == "heads":
            module["type"] = f"{SECRET}List"


def module_count(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    if data["inspect"] is not None:
        kept = [m for m in modules(data) if not m["name"].startswith("heads.")]
        heads = [{"name": f"heads.{i}", "type": "Head", "instance": 100 + i} for i in range(NUMBER)]
        data["inspect"]["modules"] = kept + heads


def same_module(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    first = {m["name"]: m["instance"] for m in modules(data)}.get("heads.0")
    for module in modules(data):
        if module["name"] == "heads.1":
            module.update(name=f"heads.{SECRET}", instance=first)


def loads_unasked(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    if data["load"] is not None:
        data["load"]["missing"].append(SECRET)


FORGED: dict[str, tuple[str, Edit, str, str]] = {
    # what: (problem, edit, the secret, what a candidate reads instead)
    "container name": (CAUSAL, container, SECRET, "returned a sequence of its own class of 2"),
    "length": (CAUSAL, length, str(NUMBER), "returned a tuple of more than 16 ("),
    "output shape": (CAUSAL, shape, str(NUMBER), "n) float32 tensor, expected a ("),
    "parameter names": (CAUSAL, names, SECRET, "unexpected parameter one of another name"),
    "parameter shapes": (CAUSAL, names, str(NUMBER), "has shape (n), expected (n)"),
    "parameter count": (CAUSAL, names, str(NUMBER), "more parameters than the"),
    "buffer names": (CAUSAL, buffers, SECRET, "no buffer named mask (found one of another"),
    "attribute text": (
        CAUSAL,
        attributes(SECRET, {"type": f"{SECRET}Drop", "p": 0.5}),
        SECRET,
        "n_head is a str, expected",
    ),
    "attribute numbers": (
        CAUSAL,
        attributes(NUMBER, {"type": "Dropout", "p": float(NUMBER)}),
        str(NUMBER),
        "n_head is another value, expected",
    ),
    "error file": (CAUSAL, raising(f"{SECRET}.py", 3), SECRET, "the call raised: ValueError"),
    "error line": (
        CAUSAL,
        raising(f"{CAUSAL}.py", NUMBER),
        str(NUMBER),
        "the call raised: ValueError",
    ),
    "gradient shape": (CAUSAL, gradients, str(NUMBER), "the input is a (n) float32 tensor"),
    "module type": (WRAPPER, module_type, SECRET, "heads is a module of its own class, not an"),
    "module count": (WRAPPER, module_count, str(NUMBER), "heads holds more modules than"),
    "module name": (WRAPPER, same_module, SECRET, "one of another name is the same module as"),
}


@pytest.mark.parametrize("what", sorted(FORGED))
def test_a_forged_fact_reaches_instructors_only(prepared: dict[str, Prepared], what: str) -> None:
    problem, edit, secret, instead = FORGED[what]
    report = judged(prepared[problem], forged(prepared[problem], edit))
    assert_withheld(report, secret)
    assert instead in public_text(report)


def test_weights_named_other_than_asked_are_a_malformed_record(
    prepared: dict[str, Prepared],
) -> None:
    """The names a load reports missing are the grader's: another is no text, but a reason."""
    report = judged(prepared[CAUSAL], forged(prepared[CAUSAL], loads_unasked))
    assert_withheld(report, SECRET, instructors=False)
    messages = [c.message for c in report.problems[0].checks]
    assert any("weight loading that names other parameters" in m for m in messages)


def test_an_error_in_the_candidates_file_shows_its_place(prepared: dict[str, Prepared]) -> None:
    """The control: a line of the submission's own file is shown, its message and code not."""
    report = judged(prepared[CAUSAL], forged(prepared[CAUSAL], raising(f"{CAUSAL}.py", 3)))
    shown = public_text(report)
    assert f"the call raised: ValueError at {CAUSAL}.py:3" in shown
    assert "x.shape" not in shown and str(NUMBER) not in shown
    assert "x.shape" in report.model_dump_json()


def probe_id(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    data["id"] += SECRET


def dtype(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    for out in tensor_outputs(data):
        out["dtype"] = SECRET


def device(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    for out in tensor_outputs(data):
        out["device"] = SECRET


def param_dtype(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    for param in (data["inspect"] or {}).get("params", []):
        param["dtype"] = SECRET


def error_call(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    raising(f"{CAUSAL}.py", 3, NUMBER)(data, tensors, probe)


UNREAD: dict[str, tuple[Edit, str, bool]] = {
    # what: (edit, the secret, whether the instructor's message quotes it)
    "probe id": (probe_id, SECRET, True),
    "dtype": (dtype, SECRET, False),
    "device": (device, SECRET, False),
    "parameter dtype": (param_dtype, SECRET, False),
    "error call": (error_call, str(NUMBER), True),
}


@pytest.mark.parametrize("what", sorted(UNREAD))
def test_a_record_the_grader_cannot_read_is_a_crash_with_a_plain_message(
    prepared: dict[str, Prepared], tmp_path: Path, what: str
) -> None:
    """A value outside the grader's vocabulary is a parse error: the problem is `crashed`, the
    instructor reads why, the candidate only that the results could not be read."""
    edit, secret, quoted = UNREAD[what]
    run = read_forged(prepared[CAUSAL], edit, tmp_path)
    assert run.invalid
    report = judged(prepared[CAUSAL], run)
    problem = report.problems[0]
    assert problem.status is ProblemStatus.crashed
    assert problem.message.startswith("the candidate's process left results the grader cannot")
    assert problem.public_message == UNREADABLE
    assert_withheld(report, secret, instructors=quoted)


def float8(data: dict[str, Any], tensors: dict[str, torch.Tensor], probe: Probe) -> None:
    for out in tensor_outputs(data):
        out["dtype"] = "float8_e4m3fn"
    tensors.update({key: value.to(torch.float8_e4m3fn) for key, value in tensors.items()})


def test_a_float8_record_is_read_and_judged(prepared: dict[str, Prepared], tmp_path: Path) -> None:
    """The tensors of a dtype the host cannot compute on are never built: the checks say what
    came back."""
    run = read_forged(prepared[CAUSAL], float8, tmp_path)
    assert not run.invalid
    first = next(iter(run.probes.values()))
    assert all(t.dtype is not torch.float8_e4m3fn for t in first.tensors.values())
    problem = judged(prepared[CAUSAL], run).problems[0]
    assert problem.status is ProblemStatus.graded, problem.message


def test_a_float8_output_is_a_verdict_beside_a_complete_submission(
    make_grader: Callable[..., Grader],
) -> None:
    grader = make_grader([CAUSAL])
    paths = [ROOT / "tests" / "hostile" / "returns_float8", ROOT / "submissions" / "complete"]
    reports = {r.submission: r.problem(CAUSAL) for r in grader.grade_many(paths, jobs=2)}
    honest = reports["complete"]
    assert honest.score == honest.max_score
    problem = reports["returns_float8"]
    assert problem.status is ProblemStatus.graded, problem.message
    shape_check = next(c for c in problem.checks if c.check == "output_shape")
    assert shape_check.status is CheckStatus.failed
    assert "returned a (2, 8, 48) float8_e4m3fn tensor, expected a (2, 8, 48)" in (
        shape_check.message
    )


def test_a_candidate_sees_names_shapes_and_counts_the_grader_can_bound() -> None:
    known = {"W_q", "weight", "heads"}
    names = ["W_q.weight", f"{SECRET}.weight", "heads.3.weight", "heads.99.weight"]
    with owntext.public():
        assert own_shape([2, 8, NUMBER], {2, 8, 48}) == "(2, 8, n)"
        assert own_names(names, known) == "W_q.weight, heads.3.weight, 2 of other names"
        assert (
            own_name(SECRET, known, "a parameter of another name") == "a parameter of another name"
        )
        assert (own_count(3), own_count(NUMBER)) == ("3", "more than 16")
    assert own_shape([2, 8, NUMBER], {2, 8}) == f"(2, 8, {NUMBER})"
    assert own_names(names, known) == ", ".join(names)
    assert own_count(NUMBER) == str(NUMBER)


def test_a_candidate_sees_measured_numbers_to_one_digit() -> None:
    """Numbers measured on the candidate's output could spell what its code read: to them, one
    significant digit, at most 1000; to instructors, three (a row sum, six)."""
    with owntext.public():
        assert (own_value(0.0073312), own_value(-NUMBER), own_value(math.nan)) == (
            "0.007",
            "-1e+03",
            "nan",
        )
        assert own_row_sum(1.0073312) == "1 + 0.007"
    assert (own_value(0.0073312), own_row_sum(1.0073312)) == ("0.00733", "1.00733")


def test_a_candidate_sees_a_pattern_in_steps_of_a_tenth() -> None:
    got = [[0.7331, None], [NUMBER, -NUMBER]]
    pattern = AttentionPattern(kind="weights", config="T=2", got=[got], expected=[got])
    check = CheckReport(
        name="weights",
        check="weights_sum_to_one",
        status=CheckStatus.failed,
        points=0,
        max_points=1,
        visibility=Visibility.visible,
        pattern=pattern,
    )
    shown = public_check(check).pattern
    assert shown is not None and shown.got == [[[0.7, None], [2.0, -1.0]]]
    assert shown.expected == [got]
