"""Rewrite hidden test files so that their equality comparisons compare plain values.

Every comparison made only of `==`/`!=` in a hidden test module (in an assert, inside
`all(...)`, stored in a variable, in an `and` chain) becomes one between plain values:
`a == b` turns into `__rb_plain__(a) == __rb_plain__(b)`. An operand that is a
`pytest.approx(...)` / `approx(...)` call written in the test is kept as it is (the other side
is made plain), since approx is the judge's own comparison.
"""

from __future__ import annotations

import ast

HELPER = "__rb_plain__"
CONTAINS = "__rb_contains__"
IMPORT = f"from rollbox_judge_plain import contains as {CONTAINS}, plain as {HELPER}"


def _is_approx(node: ast.expr) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Name) and f.id == "approx") or (
        isinstance(f, ast.Attribute) and f.attr == "approx"
    )


def _wrap(node: ast.expr) -> ast.expr:
    if _is_approx(node):
        return node
    call = ast.Call(func=ast.Name(id=HELPER, ctx=ast.Load()), args=[node], keywords=[])
    return ast.copy_location(call, node)


class _Plainer(ast.NodeTransformer):
    def __init__(self) -> None:
        self.changed = 0

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if all(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
            node.left = _wrap(node.left)
            node.comparators = [_wrap(c) for c in node.comparators]
            self.changed += 1
        elif len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            # `a in b` -> __rb_contains__(a, b): plain values when b is a builtin container
            self.changed += 1
            call: ast.expr = ast.Call(
                func=ast.Name(id=CONTAINS, ctx=ast.Load()),
                args=[node.left, node.comparators[0]],
                keywords=[],
            )
            if isinstance(node.ops[0], ast.NotIn):
                call = ast.UnaryOp(op=ast.Not(), operand=call)
            return ast.copy_location(call, node)
        return node


def rewrite(source: str) -> str:
    """The test module with its equality assertions made plain (unchanged if it has none)."""
    tree = ast.parse(source)
    plainer = _Plainer()
    tree = plainer.visit(tree)
    if not plainer.changed:
        return source
    body = tree.body
    at = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        at = 1  # after the docstring
    while (
        at < len(body)
        and isinstance(body[at], ast.ImportFrom)
        and body[at].module == ("__future__")
    ):
        at += 1
    body.insert(at, ast.parse(IMPORT).body[0])
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
