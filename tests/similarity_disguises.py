"""How a copier disguises a submission: each transformation takes a submission's files (name to
source) and returns the disguised files. The similarity tests and benchmark make their copies with
these."""

from __future__ import annotations

import ast
import builtins
import io
import keyword
import re
import tokenize
from collections.abc import Callable

Files = dict[str, str]
Disguise = Callable[[Files], Files]


def own_names(source: str) -> set[str]:
    """Names a copier can rename: locals, parameters (not `self`) and loop variables, unless a
    call passes an argument of that name."""
    tree = ast.parse(source)
    names = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    names |= {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    passed = {k.arg for k in ast.walk(tree) if isinstance(k, ast.keyword)}
    return names - passed - {"self", "_"} - set(dir(builtins)) - set(keyword.kwlist)


def rename_source(source: str) -> str:
    names = own_names(source)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    out = []
    for index, token in enumerate(tokens):
        before = tokens[index - 1].string if index else ""
        if token.type == tokenize.NAME and token.string in names and before != ".":
            token = token._replace(string=f"my_{token.string.lower()}_val")
        out.append(token)
    return tokenize.untokenize(out)


def renamed(files: Files) -> Files:
    """Every local name and parameter renamed."""
    return {name: rename_source(source) for name, source in files.items()}


def blocks(body: list[ast.stmt], lines: list[str]) -> list[tuple[int, int]]:
    """The (start, end) line ranges of the function and class definitions of a body."""
    found = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.end_lineno is not None:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            found.append((start, node.end_lineno))
    return found


def reverse_blocks(lines: list[str], spans: list[tuple[int, int]]) -> list[str]:
    if len(spans) < 2:
        return lines
    first, last = spans[0][0], spans[-1][1]
    chunks = [[*lines[a:b], "", ""] for a, b in spans]
    return lines[:first] + [line for chunk in reversed(chunks) for line in chunk] + lines[last:]


def reorder_source(source: str) -> str:
    lines = source.splitlines()
    tree = ast.parse(source)
    for node in reversed(tree.body):  # inside classes first: line numbers still hold
        if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
            inner = reverse_blocks(lines[: node.end_lineno], blocks(node.body, lines))
            lines = inner + lines[node.end_lineno :]
    lines = reverse_blocks(lines, blocks(ast.parse("\n".join(lines)).body, lines))
    return "\n".join(lines) + "\n"


def reordered(files: Files) -> Files:
    """Functions, classes and methods in reverse order."""
    return {name: reorder_source(source) for name, source in files.items()}


def recomment_source(source: str) -> str:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    kept = [t for t in tokens if t.type != tokenize.COMMENT]
    text = tokenize.untokenize(kept)
    out = []
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        indent = (len(line) - len(stripped)) // 2  # four spaces become two
        if stripped.startswith(("return", "for ", "if ")):
            out.append(" " * indent + f"# now: {stripped.split()[0]} step")
        out.append(" " * indent + re.sub(r",(\S)", r", \1", stripped.rstrip()))
        if stripped.startswith("def "):
            out.append("")
    return "\n".join(out) + "\n\n\n# end of file\n"


def recommented(files: Files) -> Files:
    """Comments dropped and others written, indentation and blank lines changed."""
    return {name: recomment_source(source) for name, source in files.items()}


SWAPS = {
    ".view(": ".reshape(",
    ".reshape(": ".view(",
    ".transpose(1, 2)": ".permute(0, 2, 1, 3)",
    ".permute(0, 2, 1, 3)": ".transpose(1, 2)",
    ".transpose(-2, -1)": ".mT",
    "torch.matmul(": "torch.bmm(",
    ".size(-1)": ".shape[-1]",
}
SWAP = re.compile("|".join(re.escape(k) for k in SWAPS))


def swapped(files: Files) -> Files:
    """Equivalent calls swapped: view and reshape, transpose and permute, matmul and bmm."""
    return {name: SWAP.sub(lambda m: SWAPS[m.group(0)], s) for name, s in files.items()}


HELPERS = "helpers.py"


def moved_source(module: str, source: str) -> tuple[str, str]:
    """Each `forward` method's and top-level function's body moved to a function of the helper
    file; the entry file calls it. Returns the entry's new source and the helpers' code."""
    tree = ast.parse(source)
    lines = source.splitlines()
    helpers: list[str] = []
    edits: list[tuple[int, int, str]] = []
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        functions += [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"]
    for function in functions:
        first = function.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            continue
        name = f"_{module}_{function.name}"
        args = [a.arg for a in function.args.args]
        header = f"def {name}({', '.join(args)}):"
        body_lines = lines[first.lineno - 1 : function.end_lineno]
        width = len(body_lines[0]) - len(body_lines[0].lstrip())
        helpers.append("\n".join([header, *("    " + b[width:] for b in body_lines)]))
        call = " " * width + f"return helpers.{name}({', '.join(args)})"
        edits.append((first.lineno - 1, function.end_lineno or first.lineno, call))
    for start, end, call in sorted(edits, reverse=True):
        lines[start:end] = [call]
    entry = "import helpers\n" + "\n".join(lines) + "\n"
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    return entry, "\n".join([*imports, "", "", *helpers]) + "\n"


def moved(files: Files) -> Files:
    """The code of every function and forward moved into a helper file."""
    out: Files = {}
    helpers: list[str] = []
    for name, source in files.items():
        out[name], code = moved_source(name.removesuffix(".py"), source)
        helpers.append(code)
    out[HELPERS] = "\n\n".join(helpers)
    return out


OPS = "ops.py"
KEPT_NAMES = {"self", "torch", "nn", "F", "math", *dir(builtins)}


def extract_source(source: str, start: int) -> tuple[str, list[str]]:
    """Each assignment's value in a function moved into a helper of its own, which the
    assignment calls with the names the value uses. Returns the new source and the helpers."""
    tree = ast.parse(source)
    helpers: list[str] = []
    for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        for statement in function.body:
            if not isinstance(statement, ast.Assign) or isinstance(
                statement.value, ast.Name | ast.Constant
            ):
                continue
            used = dict.fromkeys(
                n.id
                for n in ast.walk(statement.value)
                if isinstance(n, ast.Name) and n.id not in KEPT_NAMES - {"self"}
            )
            name = f"_step{start + len(helpers)}"
            params = ", ".join(used)
            helpers.append(f"def {name}({params}):\n    return {ast.unparse(statement.value)}\n")
            args: list[ast.expr] = [ast.Name(n, ast.Load()) for n in used]
            statement.value = ast.Call(ast.Name(name, ast.Load()), args, [])
    return "from ops import *\n" + ast.unparse(tree) + "\n", helpers


def extracted(files: Files) -> Files:
    """Every assignment's value in a function moved into a helper in another file."""
    out: Files = {}
    helpers: list[str] = []
    imports = "import math\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
    for name, source in files.items():
        out[name], found = extract_source(source, len(helpers))
        helpers += found
    out[OPS] = imports + "\n\n" + "\n\n".join(helpers)
    return out


DISGUISES: dict[str, Disguise] = {
    "renamed": renamed,
    "reordered": reordered,
    "recommented": recommented,
    "swapped": swapped,
    "moved": moved,
    "extracted": extracted,
}


def everything(files: Files) -> Files:
    """Every disguise at once."""
    for disguise in (swapped, renamed, reordered, moved, recommented):
        files = disguise(files)
    return files
