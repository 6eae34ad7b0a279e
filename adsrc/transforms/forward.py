"""Forward: turn an ANF function into its JVP, the primal with tangent code beside it.

Input: an ANF FunctionDef (see frontend/anf.py) whose activity was computed with every
variable counted as useful, so that "active" means *varied*: it depends on a
differentiated parameter. Output: a FunctionDef ``f_jvp(*params, *tangents)``
that takes the parameters, then one tangent per differentiated parameter, and
returns ``(value, tangent of value)``.

* A tangent is named after its variable with a ``d`` in front: ``dx`` is the
  tangent of ``x``, as in the adjoint code (where ``dx`` is the cotangent).
* Each active primitive ``t = op(a, b)`` is kept and followed by its tangent,
  ``dt = op_jvp_a(da, t, a, b) + op_jvp_b(db, t, a, b)``: the sum of the
  registered jvps of its varied operands. A block of these starts with a
  comment naming the original line, as in the reverse pass.
* A copy ``t = a`` gets ``dt = da``; a tuple, list or dict literal gets a
  tangent container of the same kind; a varied variable assigned an
  inactive value gets ``dt = zero``.
* A call of a user function calls that function's own JVP, compiled lazily
  (``jvp_of``), which returns the value and its tangent together.
* Control flow is kept exactly as written: forward mode needs no tape, since
  every tangent is computed right beside its value.
"""
from __future__ import annotations

from typing import Any

import gast

from ..frontend.activity import Activity, gradient_reads, target_names
from ..frontend.callees import CalleeResolver, local_names
from ..frontend.prims import Prim, argument_label, call_site
from .reverse_blocks import beyond_rule
from ..errors import NoGradientRule, UnsupportedSyntax
from ..ir import annotations as anno
from ..ir.build import assign, call, clone, const, dotted, line_comment, merge_comments, name, store
from ..ir.naming import Namer
from ..frontend.parse import Parsed


class Forward(gast.NodeTransformer):
    """One pass over the ANF body; each ``visit_*`` returns the statements that replace a statement."""

    def __init__(self, parsed: Parsed, namer: Namer, activity: Activity, wrt: list[str], runtime: dict[str, str]):
        self.parsed = parsed
        self.namer = namer
        self.act = activity
        self.wrt = wrt
        self.rt = runtime  # forward runtime helper -> its name in the generated module
        self.tangents: dict[str, str] = {}
        self.jvp_names: dict[Any, str] = {}
        self.header: list[str] = []
        self.commented: int | None = None
        self.statement: gast.stmt | None = None
        self.callees: list[tuple[Any, tuple[int, ...]]] = []  # the user functions whose JVPs this one calls
        self.resolve: Any = None  # what a call's function names (for gradient_reads); set by function()
        self.inert: Any = None
        self.receivers: Any = None  # what methods are made on (frontend/receivers.py), set by the pipeline

    # -- names ------------------------------------------------------------
    def tangent(self, var: str) -> str:
        if var not in self.tangents:
            self.tangents[var] = self.namer.adjoint(var)
        return self.tangents[var]

    def varied(self, expr: gast.AST) -> bool:
        return isinstance(expr, gast.Name) and expr.id in self.act.varied

    def tangent_of(self, expr: gast.AST) -> gast.expr:
        """The tangent of an operand: ``dx`` for a varied name, ``zero`` for anything else."""
        return name(self.tangent(expr.id)) if self.varied(expr) else name(self.rt["zero"])

    def jvp_name(self, rule, index: int) -> str:
        jvp = rule.jvps[index]
        if jvp not in self.jvp_names:
            self.jvp_names[jvp] = self.namer.fresh(jvp.__name__)
            self.header.append(f"{self.jvp_names[jvp]} = {self.rt['rule_jvp']}({rule.qualname!r}, {index})")
        return self.jvp_names[jvp]

    def line_comment(self, node: gast.AST) -> list[gast.stmt]:
        line = getattr(node, "lineno", None)
        if line is None or line == self.commented:
            return []
        self.commented = line
        return [line_comment(self.parsed, node)]

    # -- blocks -----------------------------------------------------------
    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        self.commented = None
        out: list[gast.stmt] = []
        for stmt in stmts:
            result = self.visit(stmt)
            out.extend(result if isinstance(result, list) else [result])
        self.commented = None
        return merge_comments(out) or [gast.Pass()]

    def visit_If(self, node: gast.If) -> gast.If:
        node.body = self.block(node.body)
        node.orelse = self.block(node.orelse) if node.orelse else []
        return node

    def visit_While(self, node: gast.While) -> gast.While:
        node.body = self.block(node.body)
        return node

    def visit_For(self, node: gast.For) -> gast.For:
        """A loop kept as written. ANF made every loop over a varied sequence an index loop, so the
        values a loop variable takes here carry no tangent (``for k in sorted(d)``: keys), even where
        the same name carries one elsewhere in the function: its tangent is zero in the body."""
        loop_vars = [v for v in target_names(node.target) if v in self.act.varied]
        if loop_vars and gradient_reads(node.iter, self.resolve, self.inert) & self.act.varied:
            raise UnsupportedSyntax("a loop variable that carries a tangent outside an index loop",
                                    self.parsed.where(node))
        node.body = [gast.copy_location(assign(self.tangent(v), name(self.rt["zero"])), node)
                     for v in loop_vars] + self.block(node.body)
        return node

    def visit_Return(self, node: gast.Return) -> gast.Return:
        value = node.value if node.value is not None else const(None)
        node.value = gast.Tuple(elts=[value, self.tangent_of(value)], ctx=gast.Load())
        return node

    def visit_Assign(self, node: gast.Assign) -> list[gast.stmt]:
        targets = [t for t in target_names(node.targets[0]) if t in self.act.varied]
        prim: Prim | None = anno.get(node, anno.PRIM, None)
        if not targets:
            return [node]
        if prim is not None and prim.kind == "write":
            return self.line_comment(node) + [node] + self.write(prim)
        if prim is None or not isinstance(node.targets[0], gast.Name):
            # A varied variable given a value that does not depend on the parameters.
            return [node] + [assign(self.tangent(t), name(self.rt["zero"])) for t in targets]
        target = node.targets[0].id
        self.statement = node
        out = self.line_comment(node)
        if prim.kind == "call":
            return out + self.user_call(node, target, prim)
        if prim.kind == "dynamic":
            return out + self.dynamic_call(node, target, prim)
        tangent = self.primitive(target, prim, node.value)
        return out + [node, gast.copy_location(assign(self.tangent(target), tangent), node)]

    def write(self, prim: Prim) -> list[gast.stmt]:
        """``y[index] = v`` in place: ``dy`` becomes a new array holding ``dv`` at ``index``."""
        base, index, value = prim.args
        if base.id not in self.act.varied:
            return []
        tangent = call(self.rt["written_tangent"], self.tangent_of(base), clone(base), clone(index),
                       self.tangent_of(value))
        return [assign(self.tangent(base.id), tangent)]

    # -- tangents of primitives -----------------------------------------------
    def primitive(self, target: str, prim: Prim, value: gast.expr) -> gast.expr:
        if prim.kind == "copy":
            return self.tangent_of(prim.args[0])
        if prim.kind == "pack":
            return self.pack(prim, value)
        if prim.kind == "append":
            items, value = prim.args
            return call(self.rt["append_tangent"], self.tangent_of(items), clone(items), self.tangent_of(value))
        if prim.kind == "rule":
            return self.rule(target, prim)
        raise UnsupportedSyntax(f"forward mode through an ANF statement of kind {prim.kind!r}", self.parsed.where())

    def pack(self, prim: Prim, literal: gast.expr) -> gast.expr:
        """A tangent container of the literal's kind, ``zero`` where an element is not varied."""
        tangents = [self.tangent_of(a) for a in prim.args]
        positional = isinstance(literal, gast.Call) and all(isinstance(k.value, int) for k in prim.keys)
        if isinstance(literal, gast.Tuple) or positional:  # a tuple, or a NamedTuple built by its class
            return call(self.rt["TangentTuple"], gast.Tuple(elts=tangents, ctx=gast.Load()))
        if isinstance(literal, gast.List):
            return call(self.rt["TangentList"], gast.List(elts=tangents, ctx=gast.Load()))
        return call(self.rt["TangentDict"], gast.Dict(keys=[clone(k) for k in prim.keys], values=tangents))

    def rule(self, target: str, prim: Prim) -> gast.expr:
        """The sum of the jvps of the varied operands, each called as ``op_jvp_a(da, t, a, b, **kw)``."""
        terms: list[gast.expr] = []
        rule = prim.rule
        for i, arg in enumerate(prim.args):
            if not self.varied(arg):
                continue
            if i >= len(rule.vjps) and i >= len(rule.jvps):
                raise beyond_rule(prim, i, self.parsed.where(self.statement), forward=True)
            if i >= len(rule.jvps) or rule.jvps[i] is None:
                if i >= len(rule.vjps) or rule.vjps[i] is None:
                    continue  # marked with no gradient (an index, a condition, an option)
                raise NoGradientRule(f"{rule.qualname} ({argument_label(prim, i)}) in forward mode",
                                     self.parsed.where(self.statement),
                                     f"adsrc.rules.registry.defjvp({rule.name}, ...), one jvp(t, ans, *args) per "
                                     f"argument (see docs/higher-order.md)")
            args = [self.tangent_of(arg), name(target)] + [clone(a) for a in prim.args]
            keywords = [gast.keyword(arg=k.arg, value=clone(k.value)) for k in prim.keywords]
            terms.append(gast.Call(func=name(self.jvp_name(prim.rule, i)), args=args, keywords=keywords))
        if not terms:
            return name(self.rt["zero"])
        total = terms[0]
        for term in terms[1:]:
            total = gast.BinOp(left=total, op=gast.Add(), right=term)
        return total

    def user_call(self, node: gast.Assign, target: str, prim: Prim) -> list[gast.stmt]:
        """``t = f(a, b)`` becomes ``t, dt = f_jvp(a, b, da)``, with f's own JVP for the varied arguments."""
        wrt = tuple(i for i, a in enumerate(prim.args) if self.varied(a))
        if not wrt:
            return [node, assign(self.tangent(target), name(self.rt["zero"]))]
        callee = self.namer.fresh(f"{prim.callee.__name__}_jvp".replace("<lambda>", "lambda"))
        self.header.append(f"{callee} = {self.rt['jvp_of']}({dotted(prim.func)}, wrt={wrt!r})")
        self.callees.append((prim.callee, wrt))
        node.targets = [gast.Tuple(elts=[store(target), store(self.tangent(target))], ctx=gast.Store())]
        node.value = gast.Call(func=name(callee), args=[clone(a) for a in prim.args] +
                               [self.tangent_of(prim.args[i]) for i in wrt], keywords=[])
        return [node]

    def dynamic_call(self, node: gast.Assign, target: str, prim: Prim) -> list[gast.stmt]:
        """``t = f(a)`` where the callee is a value: ``t, dt = f_jvp((df, da), f, a)``, resolved when it runs."""
        keywords = [k for k in prim.keywords if self.varied(k.value)]
        wrt = tuple(i for i, a in enumerate(prim.args) if self.varied(a)) + tuple(k.arg for k in keywords)
        if not wrt:
            return [node, assign(self.tangent(target), name(self.rt["zero"]))]
        label, options = call_site(prim, self.parsed.where(node))
        callee = self.namer.fresh(f"{label}_jvp")
        self.header.append(f"{callee} = {self.rt['jvp_of_call']}(wrt={wrt!r}, {options})")
        tangents = [self.tangent_of(a) for a in prim.args if self.varied(a)] + \
            [self.tangent_of(k.value) for k in keywords]
        node.targets = [gast.Tuple(elts=[store(target), store(self.tangent(target))], ctx=gast.Store())]
        node.value = gast.Call(func=name(callee), args=[gast.Tuple(elts=tangents, ctx=gast.Load())] +
                               [clone(a) for a in prim.args],
                               keywords=[gast.keyword(arg=k.arg, value=clone(k.value)) for k in prim.keywords])
        return [node]

    # -- the whole function -----------------------------------------------
    def function(self, node: gast.FunctionDef, jvp_name: str) -> gast.FunctionDef:
        params = [a.id for a in node.args.args]
        inputs = [self.tangent(p) for p in self.wrt]
        resolver = CalleeResolver(self.parsed, local_names(node), self.receivers)
        self.resolve, self.inert = resolver.resolve, resolver.inert_attribute
        # A parameter that is not differentiated but is reassigned a varied value
        # carries a tangent from then on; it starts at zero.
        prologue = [assign(self.tangent(p), name(self.rt["zero"]))
                    for p in params if p in self.act.varied and p not in self.wrt]
        body = self.block(node.body)
        args = gast.arguments(
            args=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None) for p in params + inputs],
            posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[],
        )
        return gast.FunctionDef(name=jvp_name, args=args, body=prologue + body, decorator_list=[],
                                returns=None, type_comment=None, type_params=[])
