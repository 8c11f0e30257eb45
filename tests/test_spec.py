"""Problem specs are validated strictly, and errors name the file and the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.courses.catalog import Catalog
from grader.specs.paths import REFERENCES, builtin_problems, builtin_references
from grader.specs.problem import CheckId, SpecError, load_spec

SHIPPED = builtin_problems() / "split_heads" / "spec.toml"


def copy_problem(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "problems" / "split_heads"
    shutil.copytree(SHIPPED.parent, folder)
    (tmp_path / REFERENCES).mkdir()
    reference = builtin_references() / "split_heads.py"
    shutil.copyfile(reference, tmp_path / REFERENCES / "split_heads.py")
    (folder / "spec.toml").write_text(text)
    return folder / "spec.toml"


def test_the_check_ids_are_the_library_s_checks() -> None:
    """`CheckId` names every check the library registers, and no other: the one spelling of
    a check's id in the grader's code."""
    from grader.verdict.checks import CHECKS

    assert set(CHECKS) == set(CheckId)
    assert all(type(key) is CheckId for key in CHECKS)


def test_unknown_field_is_named(tmp_path: Path) -> None:
    path = copy_problem(tmp_path, SHIPPED.read_text() + '\ncolour = "blue"\n')
    with pytest.raises(SpecError) as error:
        load_spec(path)
    assert str(path) in str(error.value)
    assert "colour" in str(error.value)


def test_a_problem_sets_no_worker_wall_clock(tmp_path: Path) -> None:
    """A problem's limits are its own: the worker's wall clock is the grader's to sum."""
    text = SHIPPED.read_text().replace("problem_seconds = 20", "wall_seconds = 20", 1)
    with pytest.raises(SpecError, match=r"limits\.wall_seconds"):
        load_spec(copy_problem(tmp_path, text))


def test_bad_check_field_is_named_with_its_place(tmp_path: Path) -> None:
    text = SHIPPED.read_text().replace("points = 3", "points = -3", 1)
    with pytest.raises(SpecError, match=r"checks\.1\.points"):
        load_spec(copy_problem(tmp_path, text))


def test_unknown_check_is_rejected_by_the_catalog(tmp_path: Path) -> None:
    text = SHIPPED.read_text().replace('check = "contiguous"', 'check = "contiguity"')
    copy_problem(tmp_path, text)
    with pytest.raises(SpecError, match="unknown check 'contiguity'"):
        Catalog(tmp_path / "problems")


@pytest.mark.parametrize(
    ("names", "said"),
    [('"torch.softmax"', "give the bare name"), ('"bogus_api_xyz"', "not a name of torch")],
)
def test_a_forbidden_name_torch_does_not_have_is_refused(
    tmp_path: Path, names: str, said: str
) -> None:
    """A name the source finder could never match would pass every submission: refused."""
    text = SHIPPED.read_text().replace('"MultiheadAttention", ', f"{names}, ", 1)
    copy_problem(tmp_path, text)
    with pytest.raises(SpecError, match=said):
        Catalog(tmp_path / "problems")


def test_duplicate_check_names_are_rejected(tmp_path: Path) -> None:
    text = SHIPPED.read_text().replace(
        'name = "merge_heads returns a contiguous tensor"', 'name = "no forbidden API"'
    )
    with pytest.raises(SpecError, match="duplicate check name"):
        load_spec(copy_problem(tmp_path, text))


def test_every_shipped_spec_loads(tmp_path: Path) -> None:
    catalog = Catalog()
    assert {"split_heads", "causal_self_attention", "mha_by_loop"} <= set(catalog.problems)
    numbers = [p.spec.number for p in catalog.problems.values()]
    assert numbers == sorted(numbers)
