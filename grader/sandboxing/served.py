"""What a submission's notebooks are graded as: each notebook's module without the demo code its
graded names do not need (`definitions`), and the problems' entry files not handed in made of
them, each one line importing its names from a notebook's module.

A notebook named as a problem's file is that problem's alone. A notebook for the whole set
stands for each entry file whose names it defines, the first notebook that does; a name two
problems share, or a name defined twice, is given to the problem each definition is for
(`claims`), the others' definitions left out of a copy of the module made for it, and the notes
say which definition was graded as what, and how to hand in the rest.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from grader.sandboxing.bindings import bound
from grader.sandboxing.claims import Claims, Wanted, claim
from grader.sandboxing.definitions import parse, prune
from grader.sandboxing.notebooks import NOTEBOOK, bound_names

if TYPE_CHECKING:
    from grader.sandboxing.staging import Read

DEFINITIONS = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class Served:
    modules: dict[str, bytes] = field(default_factory=dict)  # notebooks' modules as graded
    entries: dict[str, bytes] = field(default_factory=dict)  # entry files made of them
    notes: list[str] = field(default_factory=list)


@dataclass
class Taken:
    """The entry files a notebook's module stands for: each with the definitions left out of its
    copy of the module (none: the module itself serves it), and notes."""

    without: dict[str, list[ast.stmt]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def definitions(tree: ast.Module, name: str) -> list[ast.stmt]:
    """The module's top-level `class` and `def` statements of `name`, in order."""
    return [s for s in tree.body if isinstance(s, DEFINITIONS) and s.name == name]


def imported_from(files: Mapping[str, bytes], module: str) -> set[str]:
    """The names other files import from `module`: every name it binds where one imports the
    module itself or all of it (`import module`, a star import)."""
    stem = module.removesuffix(".py")
    names: set[str] = set()
    for path, data in files.items():
        tree = parse(data) if path != module and stem.encode() in data else None
        for node in ast.walk(tree) if tree is not None else ():
            whole = isinstance(node, ast.Import) and any(a.name == stem for a in node.names)
            if isinstance(node, ast.ImportFrom) and node.module == stem and not node.level:
                whole = any(a.name == "*" for a in node.names)
                names.update(a.name for a in node.names)
            if whole:
                own = parse(files[module])
                every = bound(own) if own is not None else None
                return names | (every[0] if every is not None else set())
    return names


def cells(read: Read, statements: Collection[ast.stmt]) -> str:
    """`cell 3` or `cells 3 and 7`: where the statements are in the notebook."""
    numbers = [str(read.converted.cell_at(s.lineno)) for s in statements]
    if len(numbers) == 1:
        return f"cell {numbers[0]}"
    return f"cells {', '.join(numbers[:-1])} and {numbers[-1]}"


def hand_in(entry: str) -> str:
    return f"hand it in as {entry} or {entry.removesuffix('.py')}{NOTEBOOK}"


def take(module: str, read: Read, tree: ast.Module, takers: dict[str, Wanted]) -> Taken:
    """Which of `takers` (the entry files whose names the module defines, not handed in, in the
    catalog's order) the module serves, and on which definitions."""
    taken = Taken({entry: [] for entry in takers})
    asked: dict[str, list[str]] = {}
    for entry, want in takers.items():
        for name in want.names:
            asked.setdefault(name, []).append(entry)
    for name, askers in asked.items():
        found = definitions(tree, name)
        if len(askers) > 1 and found:
            claims = claim(found, {e: takers[e] for e in askers})
        else:  # the module's own binding (the last made), the first asker's
            claims = Claims(dict.fromkeys(askers))
            claims.chosen[askers[0]] = len(found) - 1
        for entry, chosen in claims.chosen.items():
            if entry not in taken.without:
                continue  # not made of this module for another of its names
            if chosen is None:
                owner = next((e for e, c in claims.chosen.items() if c is not None), "another")
                how = " by its parameters" if claims.decided else ""
                taken.notes.append(
                    f"{entry}: not made of {module}, whose {name} is {owner}'s{how} "
                    f"({hand_in(entry)})"
                )
                del taken.without[entry]
            elif chosen != len(found) - 1:
                taken.without[entry] += [d for at, d in enumerate(found) if at != chosen]
        if len(found) > 1:
            taken.notes.append(twice(name, module, read, found, claims, taken))
    return taken


def twice(
    name: str, module: str, read: Read, found: list[ast.stmt], claims: Claims, taken: Taken
) -> str:
    """That `name` is defined more than once, which definition is graded as what and why, and
    how to hand in those that are not."""
    graded = {c: e for e, c in claims.chosen.items() if c is not None and e in taken.without}
    said = [
        f"{cells(read, [d])}'s " + (f"as {graded[at]}" if at in graded else "not graded")
        for at, d in enumerate(found)
    ]
    why = "by their parameters, a problem's last" if claims.decided else "the last, as Python does"
    text = f"{name} is defined {len(found)} times in {module} ({cells(read, found)}), graded "
    text += f"{why}: {', '.join(said)}"
    if len(graded) < len(found):
        text += (
            "; to have each graded, hand each problem's in as a file of its own, named as the "
            f"contract says ({', '.join(claims.chosen)})"
        )
    return text


def variant_name(module: str, entry: str, taken: Collection[str]) -> str:
    base = f"{module.removesuffix('.py')}_{entry.removesuffix('.py')}"
    name, number = f"{base}.py", 1
    while name in taken:
        number += 1
        name = f"{base}_{number}.py"
    return name


def note(module: str, read: Read, demo: int) -> str:
    """What was made of the notebook: its code cells, with what was left out."""
    converted = read.converted
    parts = [f"{converted.left_out} magic or shell line(s)"] if converted.left_out else []
    if demo:
        parts.append(f"{demo} top-level statement(s) of demo code")
    left = f" ({' and '.join(parts)} left out)" if parts else ""
    text = f"{module}: the code cells of the notebook {read.name}{left}"
    if converted.invalid:
        text += (
            f"; nbformat finds it invalid ({converted.invalid}): its cells were read as they are"
        )
    return text


def serve(
    files: Mapping[str, bytes],
    notebooks: Mapping[str, Read],
    entries: Mapping[str, Wanted],
    room: int,
) -> Served:
    """Each notebook's module as graded, and the entry files not in `files` made of them; the
    copies of a module made for a problem within `room` bytes (a module as graded is never
    larger than the notebook's)."""
    served = Served()
    given: dict[str, str] = {}  # entry file -> the module it imports from
    roots = {m: set(entries[m].names) if m in entries else set() for m in notebooks}
    later: list[str] = []  # notes after the modules'
    for module, read in notebooks.items():
        names = bound_names(files[module]) if module not in entries else None
        tree = parse(files[module]) if names is not None else None
        if tree is None or names is None:
            continue
        takers = {
            e: w
            for e, w in entries.items()
            if e not in files and e not in given and all(n in names[0] for n in w.names)
        }
        taken = take(module, read, tree, takers)
        for entry, without in taken.without.items():
            source = module
            if without:
                pruned = prune(files[module], entries[entry].names, without)
                if len(pruned.source) > room:
                    later.append(
                        f"{entry}: not made of {module}: its copy would pass the size limit for "
                        f"all files together ({hand_in(entry)})"
                    )
                    continue
                room -= len(pruned.source)
                source = variant_name(module, entry, {*files, *served.modules, *entries})
                served.modules[source] = pruned.source
            else:
                roots[module] |= set(entries[entry].names)
            given[entry] = source
            served.entries[entry] = f"from {source.removesuffix('.py')} import *\n".encode()
            later.append(f"{entry}: {', '.join(entries[entry].names)} from {source}")
        later += taken.notes
    notes = []
    for module, read in notebooks.items():
        pruned = prune(files[module], roots[module] | imported_from(files, module))
        served.modules[module] = pruned.source
        notes.append(note(module, read, pruned.left_out))
    served.notes = notes + later
    return served
