"""A submission's code in canonical form: what a disguise changes is gone before fingerprinting.

Comments, docstrings, imports and layout go; every name (variables, parameters, functions,
classes, and the `self` attributes the submission sets and the starter does not name) becomes
`v`, builtins and modules aside;
equivalent calls take one spelling: `view` is `reshape`, a `permute` that swaps two dimensions
is a `transpose` (whose two dimensions are sorted), `matmul` and `bmm` are `@`, `.size(i)` is
`.shape[i]`, `softmax` is one function whatever its module, `contiguous()` is dropped and
`math.sqrt(x)` is `x ** 0.5`. Code that does not parse is compared as it is.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize
from collections.abc import Collection

NAME = "v"
"""What every name the candidate chose becomes."""
MODULES = {"torch", "F", "nn", "functional", "math", "np", "numpy"}
"""Prefixes dropped from a call (`torch.tril` is `tril`): where a function comes from is style."""
FREE_CALLS = {"softmax", "matmul", "bmm", "transpose", "reshape", "sqrt"}
RENAMED_METHODS = {"view": "reshape", "view_as": "reshape_as", "bmm": "matmul", "mm": "matmul"}
DROPPED_METHODS = {"contiguous", "clone", "float"}
KEPT_NAMES = {"self", *dir(builtins)}


def canonical(tree: ast.Module, contract: Collection[str], assigned: Collection[str]) -> ast.Module:
    """A parsed module in canonical form (changed in place), its statements where they were.
    `contract`: the attributes the starter fixes; `assigned`: those of `self` the submission
    assigns anywhere. A `RecursionError` for code nested too deep."""
    found = Canonical(set(assigned) - set(contract)).visit(tree)
    assert isinstance(found, ast.Module)
    return found


def contract(starter: str) -> frozenset[str]:
    """The attributes a problem's starter fixes: those its code uses and its comments name (the
    attributes a module must have), not the words of its docstrings."""
    try:
        tree = ast.parse(starter)
        tokens = list(tokenize.generate_tokens(io.StringIO(starter).readline))
    except (SyntaxError, tokenize.TokenError):
        return frozenset()
    attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    comments = " ".join(t.string for t in tokens if t.type == tokenize.COMMENT)
    return frozenset(attributes | set(re.findall(r"[A-Za-z_]\w*", comments)))


def assigned_attributes(tree: ast.AST) -> set[str]:
    """The attributes of `self` the code assigns: its own names (`self.register_buffer` is not)."""
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    }


def integer(node: ast.expr) -> int | None:
    """The value of a literal integer, negative ones included."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def swapped_pair(args: list[ast.expr]) -> list[ast.expr] | None:
    """The two dimensions a `permute` swaps, when it swaps exactly two (else None)."""
    order = [integer(a) for a in args]
    if sorted(d for d in order if d is not None) != list(range(len(order))):
        return None
    moved: list[ast.expr] = [ast.Constant(i) for i, d in enumerate(order) if d != i]
    return moved if len(moved) == 2 else None


def sorted_dims(args: list[ast.expr]) -> list[ast.expr]:
    """`transpose`'s two dimensions in one order: `transpose(2, 1)` is `transpose(1, 2)`."""
    values = [v for v in (integer(a) for a in args) if v is not None]
    if len(args) == 2 and len(values) == 2:
        return [ast.Constant(v) for v in sorted(values)]
    return args


def positional(call: ast.Call, keyword: str) -> list[ast.expr]:
    """The call's arguments with `keyword=` passed as the next positional one."""
    extra = [k.value for k in call.keywords if k.arg == keyword]
    return [*call.args, *extra]


class Canonical(ast.NodeTransformer):
    """Rewrites a module into its canonical form (see the module's docstring)."""

    def __init__(self, attributes: Collection[str]) -> None:
        self.attributes = attributes

    def chosen(self, name: str) -> str:
        return name if name in KEPT_NAMES else NAME

    def body(self, statements: list[ast.stmt]) -> list[ast.stmt]:
        """Statements without a docstring or imports; `pass` where nothing is left."""
        kept = [
            s
            for s in statements
            if not isinstance(s, ast.Import | ast.ImportFrom)
            and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        ]
        return kept or [ast.Pass()]

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for attr in ("body", "orelse", "finalbody"):
            statements = getattr(node, attr, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                setattr(node, attr, self.body(statements))
        return super().generic_visit(node)

    def visit_Module(self, node: ast.Module) -> ast.AST:
        self.generic_visit(node)
        if node.body == [] or all(isinstance(s, ast.Pass) for s in node.body):
            node.body = []
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self.chosen(node.name)
        node.returns, node.decorator_list = None, []
        return self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        node.name = self.chosen(node.name)
        node.returns, node.decorator_list = None, []
        return self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self.chosen(node.name)
        return self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg, node.annotation = "self" if node.arg == "self" else NAME, None
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        plain = ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)
        return self.generic_visit(plain)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in MODULES:
            return node
        return ast.Name(self.chosen(node.id), node.ctx)

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        node.value = self.visit(node.value)
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        return ast.copy_location(ast.Assert(self.visit(node.test), None), node)

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        return ast.copy_location(ast.Raise(ast.Name("Error", ast.Load()), None), node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return ast.Constant("")

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        value = self.visit(node.value)
        if isinstance(value, ast.Name) and value.id in MODULES:
            return ast.Name(node.attr, node.ctx)  # torch.pi, nn.Linear: the bare name
        if node.attr == "mT":
            return self.method(value, "transpose", [ast.Constant(-2), ast.Constant(-1)])
        if isinstance(value, ast.Name) and value.id == "self" and node.attr in self.attributes:
            node.attr = NAME
        node.value = value
        return node

    def method(self, target: ast.expr, name: str, args: list[ast.expr]) -> ast.expr:
        return ast.Call(ast.Attribute(target, name, ast.Load()), args, [])

    def visit_Call(self, node: ast.Call) -> ast.AST:
        call = self.generic_visit(node)
        assert isinstance(call, ast.Call)
        func = call.func
        if isinstance(func, ast.Name) and func.id in FREE_CALLS and call.args:
            return self.free_call(func.id, call)
        if not isinstance(func, ast.Attribute):
            return call
        target, name = func.value, RENAMED_METHODS.get(func.attr, func.attr)
        if name in DROPPED_METHODS and not call.args and not call.keywords:
            return target
        if name == "matmul":
            return ast.BinOp(target, ast.MatMult(), call.args[0]) if call.args else call
        if name == "size":
            return self.size(target, call.args)
        if name == "softmax":
            return ast.Call(ast.Name("softmax", ast.Load()), [target, *positional(call, "dim")], [])
        if name == "permute":
            dims = (
                call.args[0].elts
                if len(call.args) == 1 and isinstance(call.args[0], ast.Tuple)
                else call.args
            )
            pair = swapped_pair(list(dims))
            return self.method(target, "transpose", pair) if pair else call
        if name == "transpose":
            return self.method(target, name, sorted_dims(call.args))
        func.attr = name
        return call

    def free_call(self, name: str, call: ast.Call) -> ast.expr:
        """`torch.softmax(x, dim=-1)` as `softmax(x, -1)`, `torch.matmul(a, b)` as `a @ b`,
        `torch.transpose(x, 1, 2)` as `x.transpose(1, 2)`, `math.sqrt(d)` as `d ** 0.5`."""
        first, *rest = positional(call, "dim")
        if name in ("matmul", "bmm") and rest:
            return ast.BinOp(first, ast.MatMult(), rest[0])
        if name == "transpose":
            return self.method(first, name, sorted_dims(rest))
        if name == "reshape":
            return self.method(first, name, rest)
        if name == "sqrt":
            return ast.BinOp(first, ast.Pow(), ast.Constant(0.5))
        return ast.Call(ast.Name(name, ast.Load()), [first, *rest], [])

    def size(self, target: ast.expr, args: list[ast.expr]) -> ast.expr:
        shape = ast.Attribute(target, "shape", ast.Load())
        return ast.Subscript(shape, args[0], ast.Load()) if args else shape
