"""Readable, collision-free names for temporaries and adjoints.

Generated code should read like the user's code, so temporaries are named
after what they hold (``W_at_xi`` for ``W @ xi``, ``tanh_h`` for
``np.tanh(h)``) and adjoints after their variable (``dW``), with a numeric
suffix only when a name is already taken.
"""
from __future__ import annotations

import keyword
import re

import gast

from . import annotations as anno
from .dataflow import names as name_nodes

_OPS = {
    gast.Add: "plus", gast.Sub: "minus", gast.Mult: "times", gast.Div: "over",
    gast.Pow: "pow", gast.MatMult: "at", gast.FloorDiv: "floordiv", gast.Mod: "mod",
    gast.USub: "neg", gast.UAdd: "pos",
}
_MAX_LEN = 24


class Namer:
    """Hands out identifiers that clash with no name the user's code uses."""

    def __init__(self, reserved: set[str] = frozenset()):
        self.taken: set[str] = set(reserved)

    def fresh(self, hint: str) -> str:
        base = hint if hint == "_" else (_clean(hint) or "t")
        name, n = base, 0
        while name in self.taken or keyword.iskeyword(name):
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name

    def adjoint(self, name: str) -> str:
        """The adjoint's name for a variable: dW for W, d_x1 if dx1 reads badly."""
        return self.fresh(f"d{name}" if not name.startswith("_") else f"d{name}")


def stored_names(nodes) -> set[str]:
    """The names assigned anywhere in ``nodes``."""
    return {n.id for node in nodes for n in name_nodes(node) if isinstance(n.ctx, gast.Store)}


def rewrite_expressions(stmt: gast.stmt, transform) -> None:
    """Apply ``transform`` (a NodeTransformer) to the expressions ``stmt`` evaluates once,
    before its body: an assignment's value and its targets' indices and objects (in Python's
    order), an if's test, a loop's iterable.

    A while's test is evaluated again at every iteration, so statements hoisted
    before the loop could not stand for it; it is left alone.
    """
    if isinstance(stmt, gast.AugAssign):  # Python evaluates the target's parts first, then the value
        _rewrite_target(stmt.target, transform)
    for field in ("value", "test", "iter"):
        if isinstance(stmt, gast.While) and field == "test":
            continue
        if getattr(stmt, field, None) is not None:
            setattr(stmt, field, transform.visit(getattr(stmt, field)))
    if isinstance(stmt, (gast.Assign, gast.AnnAssign)):  # then, left to right, each target's parts
        for target in stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]:
            _rewrite_target(target, transform)


def _rewrite_target(target: gast.expr, transform) -> None:
    """The expressions an assignment evaluates to find where it stores: ``a[i]``'s a and i,
    ``o.f``'s o, each element's of a tuple target."""
    if isinstance(target, gast.Subscript):
        target.value = transform.visit(target.value)
        target.slice = transform.visit(target.slice)
    elif isinstance(target, gast.Attribute):
        target.value = transform.visit(target.value)
    elif isinstance(target, (gast.Tuple, gast.List)):
        for element in target.elts:
            _rewrite_target(element, transform)
    elif isinstance(target, gast.Starred):
        _rewrite_target(target.value, transform)


class Rename(gast.NodeTransformer):
    """Renames variables in place, loads and stores alike, by a mapping old -> new."""

    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def visit_Name(self, node: gast.Name) -> gast.Name:
        if node.id in self.mapping:
            node.id = self.mapping[node.id]
        return node


def _clean(text: str) -> str:
    text = re.sub(r"\W+", "_", text).strip("_")
    if text and text[0].isdigit():
        text = "t_" + text
    return text


def _word(node: gast.AST) -> str | None:
    """A short word for an operand, or None if it has none."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return repr(node.value).replace(".", "_") if node.value >= 0 else None
    if isinstance(node, gast.Attribute):
        return node.attr
    return None


def hint_for(node: gast.AST) -> str:
    """A descriptive name for the value of an expression."""
    if anno.has(node, anno.HINT):
        return anno.get(node, anno.HINT)
    if isinstance(node, gast.BinOp):
        op = _OPS.get(type(node.op), "op")
        left, right = _word(node.left), _word(node.right)
        full = f"{left}_{op}_{right}" if left and right else op
        return full if len(full) <= _MAX_LEN else op
    if isinstance(node, gast.UnaryOp):
        operand = _word(node.operand)
        op = _OPS.get(type(node.op), "op")
        return f"{op}_{operand}" if operand else op
    if isinstance(node, gast.Call):
        func = node.func
        fname = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", "call")
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and not _is_module_like(func.value):
            full = f"{_word(func.value)}_{fname}"
        else:
            arg = _word(node.args[0]) if node.args else None
            full = f"{fname}_{arg}" if arg else fname
        return full if len(full) <= _MAX_LEN else fname
    if isinstance(node, gast.Subscript):
        base = _word(node.value) or "item"
        index = _word(node.slice)
        full = f"{base}_{index}" if index else f"{base}_item"
        return full if len(full) <= _MAX_LEN else "item"
    if isinstance(node, gast.Attribute):
        base = _word(node.value)
        return f"{base}_{node.attr}" if base else node.attr
    if isinstance(node, gast.IfExp):
        return "choice"
    if isinstance(node, (gast.List, gast.Tuple, gast.Dict)):
        return "items"
    return "t"


def _is_module_like(node: gast.AST) -> bool:
    return isinstance(node, gast.Name) and node.id in {"np", "numpy", "math", "jnp", "onp"}


def free_names(node: gast.AST) -> list[str]:
    """The names ``node`` reads but never binds, in order of first read.

    Bound means assigned anywhere in it, or a parameter of it or of a function
    or lambda inside it; what is left comes from outside: globals, closure
    cells, builtins.
    """
    bound = {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    for child in gast.walk(node):
        if isinstance(child, (gast.FunctionDef, gast.Lambda)):
            args = child.args
            bound |= {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
            bound |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
    seen: dict[str, None] = {}
    for child in gast.walk(node):
        if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Load) and child.id not in bound:
            seen[child.id] = None
    return list(seen)
