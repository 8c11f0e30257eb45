"""A candidate's graded feedback carries their own exception's message where it quotes their
own source or Python's own words (a renamed constructor parameter, a module not installed),
and never what their code could have read of the hidden checks."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from grader.cli.main import cli
from grader.sandboxing.ownmessage import Known, fill, literal_templates, shown_message, template

ROOT = Path(__file__).resolve().parent.parent
COMPLETE = ROOT / "submissions" / "complete"

# Stashes every size it is called with, then names them all in the message of a visible
# check's error: a hidden config's sizes among them.
LEAKS_SIZES = """
import torch

SEEN = []


def split_heads(x, num_heads):
    SEEN.extend(x.shape)
    if len(SEEN) > 3:
        raise ValueError(f"num_heads must divide C: got {SEEN}")
    B, T, C = x.shape
    return x.reshape(B, T, num_heads, C // num_heads).transpose(1, 2)


def merge_heads(x):
    raise RuntimeError("SECRET " + str(sorted(set(SEEN))))
"""


def grade(folder: Path, out: Path, formats: str) -> None:
    result = CliRunner().invoke(
        cli,
        ["grade", str(folder), "--backend", "local", "--out", str(out), "--format", formats],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output


def gradescope_outputs(out: Path, name: str) -> str:
    """What Gradescope shows the student: the visible tests' outputs."""
    results = json.loads((out / "gradescope" / f"{name}.json").read_text())
    return "\n".join(t["output"] for t in results["tests"] if t["visibility"] == "visible")


def test_graded_feedback_names_the_renamed_parameter_and_the_missing_module(
    tmp_path: Path,
) -> None:
    renamed, einops = tmp_path / "class" / "renamed", tmp_path / "class" / "einops_user"
    renamed.mkdir(parents=True)
    einops.mkdir()
    source = (COMPLETE / "self_attention.py").read_text()
    (renamed / "self_attention.py").write_text(source.replace("embedding_dim", "d_model"))
    helper = (COMPLETE / "split_heads.py").read_text()
    (einops / "split_heads.py").write_text("import einops\n" + helper)
    out = tmp_path / "out"
    grade(tmp_path / "class", out, "markdown,gradescope")

    said = "SelfAttention.__init__() got an unexpected keyword argument 'embedding_dim'"
    hint = (
        "SelfAttention.__init__ at self_attention.py:8 takes d_model where the contract passes "
        "embedding_dim: rename d_model to embedding_dim"
    )
    feedback = (out / "feedback" / "renamed.md").read_text().replace("\\", "")
    grade(renamed, tmp_path / "one", "classroom50")  # Classroom 50 renders one submission
    release = (tmp_path / "one" / "classroom50" / "release-body.md").read_text()
    for text in (feedback, gradescope_outputs(out, "renamed"), release.replace("\\", "")):
        assert f"the constructor raised: TypeError: {said}: {hint}" in text, text
    feedback = (out / "feedback" / "einops_user.md").read_text().replace("\\", "")
    for text in (feedback, gradescope_outputs(out, "einops_user")):
        assert (
            "importing split_heads.py raised ModuleNotFoundError: No module named 'einops' "
            "at split_heads.py:1"
        ) in text, text


def test_a_message_shows_no_size_the_visible_check_does_not_know(tmp_path: Path) -> None:
    """The f-string is the candidate's own, so its text is shown; the sizes it was filled with
    only where the visible probe itself has them; a message of no known form not at all."""
    leaks = tmp_path / "class" / "leaks"
    leaks.mkdir(parents=True)
    (leaks / "split_heads.py").write_text(LEAKS_SIZES)
    out = tmp_path / "out"
    grade(tmp_path / "class", out, "markdown,gradescope")
    problems = json.loads((out / "leaks.json").read_text())["problems"]
    full = next(p for p in problems if p["problem"] == "split_heads")
    everything = " ".join(c["message"] for c in full["checks"])
    assert "num_heads must divide C: got [" in everything and "SECRET" in everything
    feedback = (out / "feedback" / "leaks.md").read_text().replace("\\", "")
    for text in (feedback, gradescope_outputs(out, "leaks")):
        assert "ValueError: num_heads must divide C: got [" in text, text
        assert "…" in text and "SECRET" not in text
        assert "RuntimeError at split_heads.py:16" in text


def test_forms_are_matched_without_backtracking_and_places_are_bounded() -> None:
    known = Known(names={"d_model", "heads"}, sizes={48, 8})
    assert fill(template("a {} b {} c"), "a x b y b z c") == ["x", "y b z"]
    assert fill(template("{}() takes {} arguments"), "f() takes 3 arguments") == ["f", "3"]
    assert fill(template("No module named '{}'"), "No module named 'x' or so") is None
    assert shown_message("name 'heads' is not defined", known) == "name 'heads' is not defined"
    assert shown_message("name 'secret_word' is not defined", known) == "name '…' is not defined"
    shape = "shape '[2, 8, 4, 12]' is invalid for input of size 768"
    assert shown_message(shape, known) == "shape '[2, 8, 4, …]' is invalid for input of size …"
    assert shown_message("anything else at all", known) == ""
    own = Known(names={"C"}, templates=literal_templates([["C is ", None, " and ", None, None]]))
    assert own.templates == [("C is ", " and ", "")]
    assert shown_message("C is 48 and 96", own) == "C is … and …"
    many = "name '" + ".".join(["heads"] * 20) + "' is not defined"
    assert "…" in shown_message(many, known)  # at most SHOWN_WORDS names and numbers
