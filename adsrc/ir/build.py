"""Building blocks of generated syntax: names, calls, assignments, line comments.

Every pass builds gast nodes through these helpers, so that a node kind is
made one way everywhere. Also here, because several passes need them:

* line comments (``# line 12: y = np.tanh(h)``), which head each block of
  generated code and are recognized by the optimizer and codegen;
* ``lambda_as_def``: a lambda as the equivalent one-statement function.
"""
from __future__ import annotations

import copy
import io
import tokenize

import gast


def name(id_: str, ctx=None) -> gast.Name:
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def store(id_: str) -> gast.Name:
    return name(id_, gast.Store())


def const(value) -> gast.Constant:
    return gast.Constant(value=value, kind=None)


def call(func: str, *args: gast.expr) -> gast.Call:
    return gast.Call(func=name(func), args=list(args), keywords=[])


def attribute(base: str, attr: str) -> gast.Attribute:
    """``base.attr``, read."""
    return gast.Attribute(value=name(base), attr=attr, ctx=gast.Load())


def method(base: str, attr: str, *args: gast.expr, **keywords: gast.expr) -> gast.Call:
    """``base.attr(*args, **keywords)``: a method of a local, or a function of a module (``np.zeros``)."""
    return gast.Call(func=attribute(base, attr), args=list(args),
                     keywords=[gast.keyword(arg=k, value=v) for k, v in keywords.items()])


def assign(target: str | gast.expr, value: gast.expr, like: gast.AST | None = None) -> gast.Assign:
    """``target = value``; ``target`` is a name or a target expression; ``like`` gives the location."""
    node = gast.Assign(targets=[store(target) if isinstance(target, str) else target], value=value,
                       type_comment=None)
    return gast.copy_location(node, like) if like is not None else node


def names_tuple(names: list[str], ctx) -> gast.expr:
    """``a`` for one name, ``(a, b)`` for several."""
    if len(names) == 1:
        return name(names[0], ctx)
    return gast.Tuple(elts=[name(n, ctx) for n in names], ctx=ctx)


def arguments(params: list[str]) -> gast.arguments:
    """A plain positional parameter list."""
    return gast.arguments(
        args=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None) for p in params],
        posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[],
    )


def function(fname: str, params: list[str], body: list[gast.stmt]) -> gast.FunctionDef:
    return gast.FunctionDef(name=fname, args=arguments(params), body=body, decorator_list=[], returns=None,
                            type_comment=None, type_params=[])


def clone(node: gast.AST) -> gast.AST:
    return copy.deepcopy(node)


def copy_tree(node: gast.AST, copies: dict[int, gast.AST] | None = None) -> gast.AST:
    """A copy of ``node`` and the nodes under it that shares their annotations' values and constants
    (copy.deepcopy's memo and dispatch cost several times more on a long adjoint); ``copies``, if given,
    receives each copy under the id of its original."""
    cls = type(node)
    new = cls.__new__(cls)
    if copies is not None:
        copies[id(node)] = new
    fields = new.__dict__
    for key, value in node.__dict__.items():
        if key.startswith("adsrc_"):
            pass
        elif isinstance(value, gast.AST):
            value = copy_tree(value, copies)
        elif type(value) is list:
            value = [copy_tree(v, copies) if isinstance(v, gast.AST) else v for v in value]
        fields[key] = value
    return new


def located(nodes, like):
    """Give ``nodes`` and their children without a location the location of ``like``."""
    for node in nodes:
        gast.copy_location(node, like)
        for child in gast.walk(node):
            if isinstance(child, (gast.stmt, gast.expr)) and getattr(child, "lineno", None) is None:
                gast.copy_location(child, like)
    return nodes


def dotted(node: gast.AST) -> str:
    """The source of a dotted name (``np.linalg.norm``)."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    raise TypeError(node)


def lambda_as_def(lam: gast.Lambda, fname: str = "lambda_") -> gast.FunctionDef:
    """``lambda args: body`` as ``def fname(args): return body``, at the lambda's location."""
    ret = gast.copy_location(gast.Return(value=lam.body), lam.body)
    node = gast.FunctionDef(name=fname, args=lam.args, body=[ret], decorator_list=[], returns=None,
                            type_comment=None, type_params=[])
    return gast.copy_location(node, lam)


# ---- line comments ----------------------------------------------------------------
class Comment:
    """A comment line in generated code; its repr is the comment text."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def comment(text: str) -> gast.Expr:
    return gast.Expr(value=gast.Constant(value=Comment(text), kind=None))


def is_comment(stmt: gast.stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(getattr(stmt.value, "value", None), Comment)


def line_comment(parsed, node: gast.AST) -> gast.stmt:
    """``# line N: <the original statement>``, without its trailing comment; ``...`` if it spans lines."""
    line = getattr(node, "lineno", None) or parsed.first_line
    text = without_trailing_comment(parsed.source_line(line))
    end = getattr(node, "end_lineno", None)
    if end and end > line:
        text += " ..."
    return comment(f"# line {line}: {text}")


def without_trailing_comment(text: str) -> str:
    """A source line without its trailing ``# comment``, if it tokenizes on its own."""
    if "#" not in text:
        return text
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                return text[: token.start[1]].rstrip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return text


def merge_comments(stmts: list[gast.stmt]) -> list[gast.stmt]:
    """Drop a line comment that repeats the previous one in the same run of simple statements."""
    out: list[gast.stmt] = []
    last = None
    for stmt in stmts:
        if is_comment(stmt):
            text = stmt.value.value.text
            if text == last:
                continue
            last = text
        elif isinstance(stmt, (gast.If, gast.For, gast.While)):
            last = None
        out.append(stmt)
    return out
