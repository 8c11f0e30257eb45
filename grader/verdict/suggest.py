"""What the candidate's sources say of a name the grader did not find: a class or function to
rename, a module imported under a near miss's name, a syntax error's place."""

from __future__ import annotations

import ast

from grader.sandboxing.bindings import bound, top_level
from grader.verdict.checks.scope import SourceFile, Sources
from grader.verdict.near import alike, cut, listed, missing_file

SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")


def missing_symbol(sources: Sources, entry: str, symbol: str) -> str | None:
    """Why `symbol` could not be found in `entry`, when its source never binds it: the near
    miss to rename, the file of the submission that defines it, or what it defines instead."""
    file: SourceFile | None = sources.files.get(entry)
    tree = file.tree if file is not None else None
    seen = bound(tree) if tree is not None else None
    if seen is None or symbol in seen[0]:
        return None
    defined = seen[1]
    problem = f"{entry} defines no {symbol}"
    near = [name for name in defined if alike(symbol, name)]
    if near:
        return f"{problem}: rename {cut(near[0])} to {symbol} (the contract's name)"
    for path, other in sources.files.items():
        other_names = bound(other.tree) if other.tree is not None and path != entry else None
        if other_names is not None and symbol in other_names[1]:
            return f"{problem}: it is in {cut(path)}; import it there or move it to {entry}"
    if defined:
        return f"{problem} (it defines {listed(defined)}): name it as the contract says"
    return f"{problem}: it defines no class or function"


def missing_import(sources: Sources, entry: str, error: str) -> str:
    """`: split_heads is not in the submission: found SplitHeads.py: rename it to
    split_heads.py`, for the module Python did not find (named in `error`, the candidate's
    process's text: only a module the entry file imports is taken from it) when the candidate
    has a near miss of it among their files; "" otherwise."""
    file = sources.files.get(entry)
    if file is None or file.tree is None:
        return ""
    for node in top_level(file.tree.body):
        modules = []
        if isinstance(node, ast.Import):
            modules = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module.split(".")[0]]
        for module in modules:
            if module in sources.by_module or f"'{module}'" not in error:
                continue
            near = missing_file(f"{module}.py", sources.files)
            if near is not None:
                return f": {module} is not in the submission: {near}"
    return ""


def syntax_error(sources: Sources, entry: str) -> str | None:
    """Where the first file of the entry's scope that Python cannot parse goes wrong, read by
    the host from the bytes handed in: `SyntaxError: invalid syntax at m.py:14, column 22:
    `def forward(self x):``."""
    for file in sources.scope(entry):
        broken = file.unreadable
        if broken is None or not broken.why.startswith(SYNTAX_ERRORS):
            continue
        lines = file.data.splitlines()
        code = ""
        if 0 < broken.line <= len(lines):
            text = lines[broken.line - 1].decode("utf-8", "replace").strip()
            code = f": `{cut(text)}`" if text else ""
        column = f", column {broken.column}" if broken.column else ""
        return f"{broken.why} at {file.path}:{broken.line}{column}{code}"
    return None


def constructor_mismatch(sources: Sources, entry: str, symbol: str, passed: list[str]) -> str:
    """`: SelfAttention.__init__ at self_attention.py:8 takes d_model where the contract passes
    embedding_dim: rename d_model to embedding_dim`, when the class `symbol` (in the entry's
    scope) has an `__init__` of its own that takes none of some keyword the contract passes;
    "" otherwise (read by the host from the bytes handed in: every output may show it)."""
    for file in sources.scope(entry):
        tree = file.tree
        classes = [] if tree is None else top_level(tree.body)
        for node in classes:
            if isinstance(node, ast.ClassDef) and node.name == symbol:
                return signature_mismatch(file.path, node, passed)
    return ""


def signature_mismatch(path: str, node: ast.ClassDef, passed: list[str]) -> str:
    init = next(
        (f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None
    )
    if init is None or init.args.kwarg is not None:
        return ""
    takes = [a.arg for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)]
    takes = takes[1:] if init.args.posonlyargs or init.args.args else takes
    unknown = [name for name in passed if name not in takes]
    if not unknown:
        return ""
    extra = [name for name in takes if name not in passed]
    hint = (
        f": {cut(node.name)}.__init__ at {path}:{init.lineno} takes "
        f"{listed(takes) if takes else 'no argument'} where the contract passes {listed(passed)}"
    )
    if len(unknown) == 1 and len(extra) == 1:
        return f"{hint}: rename {cut(extra[0])} to {unknown[0]}"
    return hint
