"""Imports go one way: a module imports only from its own layer or those below it.

Imports under `if TYPE_CHECKING:` are left out: they name types and run nothing. The sandbox
(the worker, what goes into the image) is the bottom layer and imports nothing of the grader.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sandbox", "grader")

# Bottom first. A module belongs to the layer of its longest matching prefix.
LAYERS: list[tuple[str, ...]] = [
    ("sandbox",),
    ("grader", "grader.compat", "grader.errors", "grader.strict"),
    ("grader.sandboxing",),
    ("grader.specs",),
    ("grader.reports",),
    ("grader.verdict",),
    ("grader.courses",),  # the catalog: specs bound to their checks
    ("grader.grade", "grader.resume", "grader.selfcheck", "grader.validate", "grader.economy"),
    ("grader.platforms",),
    ("grader.similarity",),  # a class compared: reads its batch as grade does
    ("grader.outputs",),
    ("grader.shards", "grader.batch"),
    ("grader.api",),
    ("grader.cli",),
]


def layer(module: str) -> int:
    matches = [
        (len(prefix), rank)
        for rank, prefixes in enumerate(LAYERS)
        for prefix in prefixes
        if module == prefix or module.startswith(prefix + ".")
    ]
    assert matches, f"{module} is in no layer"
    return max(matches)[1]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import that runs, at any depth."""
    found: list[tuple[int, str]] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and type_checking_only(node):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        todo.extend(ast.iter_child_nodes(node))
    return found


def ours(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import of this project's packages."""
    return [(line, name) for line, name in imported(tree) if name.split(".")[0] in PACKAGES]


SOURCES = sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def test_every_module_is_in_a_layer() -> None:
    for path in SOURCES:
        layer(module_name(path))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: module_name(p))
def test_imports_go_down(path: Path) -> None:
    module = module_name(path)
    rank = layer(module)
    upward = [
        f"line {line}: {name}"
        for line, name in ours(ast.parse(path.read_text(encoding="utf-8")))
        if layer(name) > rank
    ]
    assert not upward, f"{module} (layer {rank}) imports from above it: {upward}"


@pytest.mark.parametrize("path", sorted((ROOT / "sandbox").rglob("*.py")), ids=module_name)
def test_the_sandbox_needs_only_the_standard_library_torch_and_safetensors(path: Path) -> None:
    """What goes into the image runs there: a module of anything else would not be found."""
    allowed = {*sys.stdlib_module_names, "torch", "safetensors", "sandbox", "__future__"}
    found = imported(ast.parse(path.read_text(encoding="utf-8")))
    foreign = [f"line {line}: {name}" for line, name in found if name.split(".")[0] not in allowed]
    assert not foreign, f"{module_name(path)} imports what the image does not hold: {foreign}"


@pytest.mark.parametrize("path", sorted((ROOT / "grader" / "cli").glob("*.py")), ids=module_name)
def test_the_cli_calls_the_front_door_only(path: Path) -> None:
    """The CLI parses and prints: what it does is the library's (`grader.api`)."""
    found = ours(ast.parse(path.read_text(encoding="utf-8")))
    other = [
        f"line {line}: {name}"
        for line, name in found
        if name != "grader.api" and not name.startswith("grader.cli")
    ]
    assert not other, f"{module_name(path)} imports more than grader.api: {other}"
