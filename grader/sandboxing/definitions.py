"""What of a notebook's module the graded names need: its definitions, without the demo code
around them (top-level calls, prints, asserts, plots, timing, comparisons against torch's own
attention, `if __name__ == "__main__":` blocks), which a module imported for grading never runs.

The rule, on the module's top-level statements:

- Only these kinds may be kept: imports, `def`, `async def` and `class` (with their decorators),
  assignments (`=`, annotated, augmented), and `if`, `try` and `with` blocks (a guarded import,
  a definition made one way or another); any other (an expression: a call, a print, a plot; an
  `assert`, a loop, `del`) is demo code. An `if __name__ == "__main__":` block never runs on
  import: it is left out too.
- Of these, a statement is kept where a kept one, or the graded names themselves, need a name it
  binds: the names the graded names' classes and functions read as globals (Python's `symtable`
  tells globals from locals), then those that the statements binding them read, and so on. An
  assignment to an attribute or an item of a name the module binds (`Model.forward = forward`)
  is part of that name's definition. A star import is always kept (what it binds is unknown),
  and so is a constant alone (a docstring: nothing runs).
- Statements that share a line (`import torch; x = torch.randn(3)`) are kept or left out
  together.

So `x = torch.randn(2, 4, 8)` at the top level is demo code, while `import torch.nn as nn`,
`BLOCK = 8` or `Config = dataclass(...)` that a graded class reads are kept; whatever a graded
class or function does inside itself is kept as it is (a forbidden call there is still found,
at run time and in its source). What is left out is blanked, so that every line keeps its
number and the module never grows past the notebook's size limit.
"""

from __future__ import annotations

import ast
import contextlib
import re
import symtable
from collections.abc import Collection
from dataclasses import dataclass, field

from grader.sandboxing.parsetime import too_slow

LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
"""A line as Python's parser counts them (`str.splitlines` also breaks at a form feed)."""
KEPT_KINDS = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.If,
    ast.Try,
    ast.With,
    *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
)


@dataclass
class Unit:
    """Top-level statements that share their lines (most often one), lines `first`..`last`."""

    first: int
    last: int
    statements: list[ast.stmt] = field(default_factory=list)
    binds: set[str] = field(default_factory=set)
    reads: set[str] = field(default_factory=set)
    changes: set[str] = field(default_factory=set)  # names whose attributes or items it sets
    always: bool = False  # a star import, or a constant alone (a docstring): kept
    keepable: bool = False
    other: bool = False  # another problem's definition of a name: never kept


@dataclass(frozen=True)
class Pruned:
    source: bytes
    left_out: int  # top-level statements of demo code left out


def first_line(statement: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(statement, "decorator_list", [])
    return min([statement.lineno, *(d.lineno for d in decorators)])


def units(tree: ast.Module) -> list[Unit]:
    found: list[Unit] = []
    for statement in tree.body:
        start, end = first_line(statement), statement.end_lineno or statement.lineno
        if found and start <= found[-1].last:
            found[-1].last = max(found[-1].last, end)
        else:
            found.append(Unit(start, end))
        found[-1].statements.append(statement)
    return found


def runs_as_main(statement: ast.stmt) -> bool:
    """`if __name__ == "__main__":`, either way round."""
    if not isinstance(statement, ast.If) or not isinstance(statement.test, ast.Compare):
        return False
    test = statement.test
    sides = [test.left, *test.comparators]
    names = [s.id for s in sides if isinstance(s, ast.Name)]
    texts = [s.value for s in sides if isinstance(s, ast.Constant)]
    return names == ["__name__"] and texts == ["__main__"]


def is_text(statement: ast.stmt) -> bool:
    """A string alone (a docstring): nothing runs."""
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def changed_names(statement: ast.stmt) -> set[str]:
    """The names whose attributes or items an assignment sets (`Model` of `Model.forward = f`)."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
        targets = [statement.target]
    else:
        return set()
    names = set()
    for target in targets:
        if not isinstance(target, ast.Attribute | ast.Subscript):
            continue
        node: ast.expr = target
        while isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        if isinstance(node, ast.Name):
            names.add(node.id)
    return names


def global_reads(table: symtable.SymbolTable) -> set[str]:
    """The names a scope and those inside it read (or declare) as the module's globals."""
    found: set[str] = set()
    stack = list(table.get_children())
    while stack:
        scope = stack.pop()
        found.update(
            s.get_name()
            for s in scope.get_symbols()
            if s.is_global() and (s.is_referenced() or s.is_declared_global())
        )
        stack.extend(scope.get_children())
    return found


def read_unit(unit: Unit, lines: list[str]) -> None:
    """What the unit binds and reads at the module's level; a unit `symtable` refuses (a
    `return` at the top) is never kept."""
    unit.keepable = any(isinstance(s, KEPT_KINDS) and not runs_as_main(s) for s in unit.statements)
    unit.always = any(
        isinstance(s, ast.ImportFrom) and any(a.name == "*" for a in s.names)
        for s in unit.statements
    ) or all(is_text(s) for s in unit.statements)
    for statement in unit.statements:
        unit.changes |= changed_names(statement)
    text = "".join(lines[unit.first - 1 : unit.last])
    try:
        table = symtable.symtable(text, "<notebook>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        unit.keepable = False
        return
    for symbol in table.get_symbols():
        if symbol.is_assigned() or symbol.is_imported():
            unit.binds.add(symbol.get_name())
        if symbol.is_referenced():
            unit.reads.add(symbol.get_name())
    unit.reads |= global_reads(table)


def needed_units(found: list[Unit], roots: Collection[str]) -> list[bool]:
    """Which units are kept: those binding a name that the roots, or a kept unit, need (each
    name followed once: linear in the module's size, however its names chain)."""
    defined = defined_names(found)
    by_name: dict[str, list[int]] = {}  # the keepable units that bind or change each name
    for i, unit in enumerate(found):
        for name in unit.binds | (unit.changes & defined) if unit.keepable else ():
            by_name.setdefault(name, []).append(i)
    kept = [False] * len(found)
    seen = set(roots)
    waiting = list(seen)

    def keep(i: int) -> None:
        kept[i] = True
        new = (found[i].reads | found[i].changes) - seen
        seen.update(new)
        waiting.extend(new)

    for i, unit in enumerate(found):
        if unit.always:
            keep(i)
    while waiting:
        for i in by_name.get(waiting.pop(), []):
            if not kept[i]:
                keep(i)
    return kept


def defined_names(found: list[Unit]) -> set[str]:
    """The names the module binds otherwise than by an import."""
    imports = ast.Import | ast.ImportFrom
    made = [u for u in found if not all(isinstance(s, imports) for s in u.statements)]
    return set().union(*(u.binds for u in made))


def parse(source: bytes) -> ast.Module | None:
    """The module's tree (a notebook may `await` at its top), or None (also where the parser
    took over its budget on it: `parsetime`)."""
    if too_slow(source) is not None:
        return None
    with contextlib.suppress(SyntaxError, ValueError, RecursionError, MemoryError):
        flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        tree = compile(source, "<notebook>", "exec", flags, dont_inherit=True)
        assert isinstance(tree, ast.Module)
        return tree
    return None


def prune(source: bytes, roots: Collection[str], without: Collection[ast.stmt] = ()) -> Pruned:
    """The module with what `roots` (the graded names) do not need turned into comments, and
    `without` (a statement's other definitions) too; as it is where it does not parse (importing
    it says why)."""
    tree = parse(source)
    if tree is None:
        return Pruned(source, 0)
    text = source.decode("utf-8", "surrogateescape")
    lines = LINE.findall(text)
    found = units(tree)
    dropped = {(s.lineno, s.col_offset) for s in without}
    for unit in found:
        unit.other = any((s.lineno, s.col_offset) in dropped for s in unit.statements)
        if not unit.other:
            read_unit(unit, lines)
    kept = needed_units(found, roots)
    left_out = 0
    for unit, keep in zip(found, kept, strict=True):
        if keep:
            continue
        left_out += 0 if unit.other else len(unit.statements)
        for at in range(unit.first - 1, unit.last):
            lines[at] = lines[at][len(lines[at].rstrip("\r\n")) :]  # its end of line only
    return Pruned("".join(lines).encode("utf-8", "surrogateescape"), left_out)
