"""ANF: split active statements into one primitive operation per statement.

Input: a desugared FunctionDef and its activity. Output: the same function in
which every active assignment has the form ``t = op(a, b, ...)`` with atomic
operands (names and constants), annotated with a :class:`Prim` that says
which rule differentiates it. Temporaries are named after what they hold
(``W_at_xi = W @ xi``). Inactive statements are left exactly as written.

Also here, because they need to know what is active:

* ``for x in xs`` over a differentiated sequence becomes an index loop
  ``for i in range(len(xs)): x = xs[i]``, so that gradients reach ``xs``
  (over a copy of the name ``xs`` if the body rebinds it);
* ``v = v`` is dropped (its backward would reset ``dv`` after adding to it);
* a primitive whose target is also one of its operands (``h = np.tanh(h)``)
  writes a fresh temporary first (``h_next``), so the backward sweep can
  still see the old value;
* callees are resolved: a registered rule, a user function (transformed
  recursively), a non-differentiable function, or a NoGradientRule error (a
  library's function is never transformed: libraries.py);
* a differentiable keyword argument of a rule's call (``x.clip(min=lo)``) is
  moved to its parameter's position, since a rule differentiates positional
  arguments, or the call is refused where it has none.
"""
from __future__ import annotations

import contextlib
import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

import operator

import gast
import numpy as np

from ..rules import registry
from ..rules.assembly import INDEX_TRICKS, index_concatenate
from ..rules.closures import local_function
from ..rules.iterables import dict_with
from ..rules.checkpoint import recomputes
from .activity import Activity, gradient_reads, is_append, target_names
from .desugar import builtin_name
from .libraries import is_library_function, library_remedy
from ..errors import NoGradientRule, UnsupportedSyntax
from ..ir import annotations as anno
from ..ir.build import call, const, located, name, store
from ..ir.dataflow import names as name_nodes
from ..ir.naming import Namer, hint_for, stored_names
from .parse import _MISSING, Parsed, bound_parts, signature_of

BINARY = {
    gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply, gast.Div: np.true_divide,
    gast.Pow: np.power, gast.MatMult: np.matmul, gast.FloorDiv: np.floor_divide, gast.Mod: np.mod,
}
UNARY = {gast.USub: np.negative, gast.UAdd: np.positive}


class CalleeResolver:
    """What a call's function expression names, where that can be known before running.

    A dotted name rooted outside the function (``np.linalg.norm``, ``helper``)
    resolves through closure cells, globals and builtins; a method of a local
    value (``x.sum``) resolves through the registry's method table.
    """

    def __init__(self, parsed: Parsed, locals_: set[str]):
        self.parsed = parsed
        self.locals = locals_

    def resolve_callee(self, func: gast.AST) -> Any:
        if isinstance(func, gast.Name):
            if func.id in self.locals:
                return None
            obj = self.parsed.resolve(func.id)
            return None if obj is _MISSING else obj
        if isinstance(func, gast.Attribute):
            if not self.global_chain(func.value):
                return registry.method_primitive(func.attr)
            base = self.resolve_callee(func.value)
            return getattr(base, func.attr, None) if base is not None else None
        return None

    resolve = resolve_callee

    def global_chain(self, node: gast.AST) -> bool:
        """True for ``np``, ``np.linalg`` and the like: a dotted name rooted outside the function."""
        while isinstance(node, gast.Attribute):
            node = node.value
        return isinstance(node, gast.Name) and node.id not in self.locals


@dataclass
class Prim:
    """How to differentiate one ANF statement ``target = op(args)``.

    kind is ``"rule"`` (a registered primitive), ``"copy"`` (``t = a``),
    ``"pack"`` (a tuple, list or dict literal; ``keys`` are its positions or
    keys), ``"append"`` (``xs + [v]``), ``"call"`` (a user function,
    differentiated by its own adjoint), ``"dynamic"`` (a call of a value: a
    function passed in, a method of an object, resolved when it runs) or ``"write"`` (``x[i] = v``, in place;
    ``args`` are ``[x, i, v]``, the index as a value).
    ``args`` are the value expressions the vjp receives after ``(g, ans)``.
    """

    kind: str
    args: list[gast.expr]
    keywords: list[gast.keyword] = field(default_factory=list)
    rule: registry.Rule | None = None
    callee: Any = None
    func: gast.expr | None = None
    keys: list[gast.expr] = field(default_factory=list)
    # For a rule: the name of each positional argument where the call named it
    # (``max`` in ``x.clip(max=hi)``), for messages.
    names: dict[int, str] = field(default_factory=dict)
    # For a call of a value (``"dynamic"``): ``args`` are ``[callee or object, *atoms]``; ``method`` is the
    # attribute called on the object, ``starred``/``mapping`` the positions of ``*xs``/``**kw`` atoms.
    method: str | None = None
    starred: tuple = ()
    mapping: tuple = ()
    source: str | None = None  # the callee expression, where it is not a name (np.vectorize(math.erf))
    after: bool = False  # the method is looked up after the last atom (a class) in the MRO: super(C, obj).m()
    into_list: bool = False  # a write into a list made here (frontend/lists.py), not into an array


def call_site(prim: Prim, where: str) -> tuple[str, str]:
    """A ``"dynamic"`` call's label (for names: the method, or the callee variable) and the options
    that describe it to ``adjoint_of_call`` / ``jvp_of_call`` in the generated module's header."""
    label = prim.method or (prim.args[0].id if isinstance(prim.args[0], gast.Name) else "call")
    options = f"where={where!r}"
    options += f", method={prim.method!r}" if prim.method else ""
    options += f", starred={prim.starred!r}" if prim.starred else ""
    options += f", mapping={prim.mapping!r}" if prim.mapping else ""
    options += f", source={prim.source!r}" if prim.source else ""
    options += ", after=True" if prim.after else ""
    return label, options


def argument_label(prim: Prim, index: int) -> str:
    """``argument 2 ('a_max')`` of a rule's call, for messages: the position its vjp and jvp
    are indexed by, and the parameter's name where it is known."""
    label = prim.names.get(index)
    if label is None and prim.rule is not None:
        params = positional_parameters(prim.rule.func)
        if params is not None and index < len(params):
            label = params[index].name
    return f"argument {index}" + (f" ({label!r})" if label else "")


def positional_parameters(func: Any) -> list[inspect.Parameter] | None:
    """The parameters of ``func`` that a call can fill by position (up to ``*args``), or None
    when its signature cannot be read. A rule may declare them (``rule.extra["signature"]``) for
    a primitive whose own signature is ``(*args, **kwds)``, such as ``scipy.stats.norm.logpdf``."""
    rule = registry.lookup(func)
    try:
        declared = rule.extra.get("signature") if rule is not None else None
        params = (declared or inspect.signature(func)).parameters.values()
    except (TypeError, ValueError):
        return None
    out = []
    for param in params:
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            break
        out.append(param)
    return out


class ANF(CalleeResolver):
    def __init__(self, parsed: Parsed, namer: Namer, activity: Activity, locals_: set[str]):
        super().__init__(parsed, locals_)
        self.namer = namer
        self.varied = set(activity.varied)
        self.activity = activity
        self.out: list[gast.stmt] = []
        self.line: gast.AST | None = None
        # Temporaries read exactly once, by the statement right after their
        # definitions: each gets one contribution per definition, so the
        # backward sweep computes it at once instead of deferring it.
        self.single_use: set[str] = set()
        self.closures: set[str] = set()  # names holding a local function made here (rules/closures.py)

    # -- plumbing ---------------------------------------------------------
    @contextlib.contextmanager
    def collecting(self):
        saved, self.out = self.out, []
        try:
            yield self.out
        finally:
            self.out = saved

    def emit(self, target: str, value: gast.expr, prim: Prim | None = None) -> None:
        stmt = gast.Assign(targets=[store(target)], value=value, type_comment=None)
        gast.copy_location(stmt, self.line)
        for child in gast.walk(value):
            if getattr(child, "lineno", None) is None and hasattr(child, "lineno"):
                gast.copy_location(child, self.line)
        if prim is not None:
            anno.set(stmt, anno.PRIM, prim)
            if any(self.is_varied(a) for a in prim.args):
                self.varied.add(target)
            if prim.rule is not None and prim.rule.func is local_function \
                    or prim.kind == "copy" and isinstance(prim.args[0], gast.Name) and prim.args[0].id in self.closures:
                self.closures.add(target)
        self.out.append(stmt)

    def is_varied(self, expr: gast.AST) -> bool:
        return bool(gradient_reads(expr, self.resolve_callee) & self.varied)

    def where(self, node: gast.AST) -> str:
        return self.parsed.where(node if getattr(node, "lineno", None) else self.line)

    # -- statements -------------------------------------------------------
    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        with self.collecting() as out:
            for stmt in stmts:
                self.line = stmt
                self.stmt(stmt)
        return out

    def stmt(self, stmt: gast.stmt) -> None:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
            self.set_item(stmt.targets[0], stmt.value)
        elif isinstance(stmt, gast.Assign):
            targets = target_names(stmt.targets[0])
            if not any(self.activity.active(t) for t in targets) or not self.is_varied(stmt.value):
                self.out.append(stmt)
            elif isinstance(stmt.targets[0], gast.Name):
                self.expr_into(stmt.value, stmt.targets[0].id)
            else:
                self.unpack(stmt.targets[0], stmt.value)
        elif isinstance(stmt, gast.If):
            stmt.body = self.block(stmt.body)
            stmt.orelse = self.block(stmt.orelse)
            self.line = stmt
            self.out.append(stmt)
        elif isinstance(stmt, gast.While):
            stmt.body = self.block(stmt.body)
            self.line = stmt
            self.out.append(stmt)
        elif isinstance(stmt, gast.For):
            self.loop(stmt)
        elif is_append(stmt) and self.activity.active(stmt.value.func.value.id):
            self.append(stmt)
        elif isinstance(stmt, gast.Return) and stmt.value is not None and self.is_varied(stmt.value):
            stmt.value = self.expr(stmt.value)
            self.out.append(stmt)
        else:
            self.out.append(stmt)

    def loop(self, loop: gast.For) -> None:
        target = loop.target.id
        is_range = isinstance(loop.iter, gast.Call) and isinstance(loop.iter.func, gast.Name) \
            and loop.iter.func.id == "range"
        if not is_range and self.activity.active(target) and self.is_varied(loop.iter):
            seq = self.expr(loop.iter)
            if isinstance(seq, gast.Name) and seq.id in stored_names(loop.body):
                # The body rebinds the name; the loop runs over the object it held first.
                first = self.namer.fresh(f"{seq.id}_seq")
                self.emit(first, seq, Prim("copy", [seq]))
                seq = name(first)
            if isinstance(seq, gast.Name):
                self.single_use.discard(seq.id)  # read in every iteration
            index = self.namer.fresh("i")
            loop.iter = call(builtin_name(self.parsed, "range"),
                             call(self.runtime["loop_length"], const(self.parsed.where(loop)), seq))
            gast.copy_location(loop.iter, loop)
            loop.target = store(index)
            body = self.block([gast.copy_location(gast.Assign(
                targets=[store(target)], value=gast.Subscript(value=seq, slice=name(index), ctx=gast.Load()),
                type_comment=None), loop)])
            loop.body = body + self.block(loop.body)
        else:
            loop.body = self.block(loop.body)
        self.line = loop
        self.out.append(loop)

    def set_item(self, target: gast.Subscript, value: gast.expr) -> None:
        """``x[i] = v`` stays a write in place, over atoms, annotated ``Prim("write", [x, i, v])``.

        Every write is annotated, differentiated array or not: the reverse pass
        tapes what it overwrites and restores it, since the backward sweep may
        read the array's earlier elements. A write into a list (the fence's
        ``WRITTEN_LISTS``) is marked ``into_list``: it replaces an item.
        """
        base = target.value.id
        atom = self.expr(value) if self.activity.active(base) else value
        forward_index, index_value = self.index(target.slice)
        write = gast.Assign(targets=[gast.Subscript(value=name(base), slice=forward_index, ctx=gast.Store())],
                            value=atom, type_comment=None)
        located([write], self.line)
        into_list = base in anno.get(self.parsed.node, anno.WRITTEN_LISTS, set())
        anno.set(write, anno.PRIM, Prim("write", [name(base), index_value, atom], into_list=into_list))
        self.out.append(write)

    def append(self, stmt: gast.Expr) -> None:
        """``xs.append(v)`` on a differentiated list becomes ``xs = [*xs, v]``.

        The adjoint runs it in place again and pops it back in the backward
        sweep (transforms/reverse_blocks.py, ``grown_in_place``); forward mode keeps
        the copy, which leaves every version of the list as it was.
        """
        items = stmt.value.func.value.id
        value = self.expr(stmt.value.args[0])
        grown = gast.List(elts=[gast.Starred(value=name(items), ctx=gast.Load()), value], ctx=gast.Load())
        fresh = self.namer.fresh(f"{items}_next")
        self.single_use.add(fresh)
        self.emit(fresh, grown, Prim("append", [name(items), value]))
        self.emit(items, name(fresh), Prim("copy", [name(fresh)]))

    def unpack(self, target: gast.AST, value: gast.expr) -> None:
        names = target_names(target)
        if not all(isinstance(e, gast.Name) for e in target.elts):
            raise UnsupportedSyntax("nested unpacking of differentiable values", self.where(target))
        if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
            atoms = []
            for elt in value.elts:
                atom = self.expr(elt)
                if isinstance(atom, gast.Name) and atom.id in names:
                    copy_name = self.namer.fresh(f"{atom.id}_old")
                    self.emit(copy_name, atom, Prim("copy", [atom]))
                    atom = name(copy_name)
                atoms.append(atom)
        else:
            whole = self.expr(value)
            self.single_use.discard(whole.id)  # read once per target
            atoms = [gast.Subscript(value=whole, slice=const(i), ctx=gast.Load()) for i in range(len(names))]
        for t, atom in zip(names, atoms):
            self.expr_into(atom, t)

    # -- expressions ------------------------------------------------------
    def expr(self, node: gast.expr) -> gast.expr:
        """Emit statements computing ``node``; return an atom holding its value."""
        if self.atomic(node):
            return node
        if isinstance(node, gast.IfExp) or not self.is_varied(node):
            tmp = self.namer.fresh(hint_for(node))
            self.expr_into(node, tmp)
        else:
            value, prim = self.primitive(node)
            tmp = self.namer.fresh(hint_for(node if anno.has(node, anno.HINT) else value))
            self.emit(tmp, value, prim)
        self.single_use.add(tmp)
        return name(tmp)

    def atomic(self, node: gast.expr) -> bool:
        if isinstance(node, (gast.Name, gast.Constant)):
            return True
        if isinstance(node, gast.UnaryOp) and isinstance(node.operand, gast.Constant):
            return True
        if isinstance(node, (gast.Tuple, gast.List)):
            return all(self.atomic(e) and not self.is_varied(e) for e in node.elts)
        if isinstance(node, gast.Dict):
            return False
        if isinstance(node, gast.Attribute):
            root = node
            while isinstance(root, gast.Attribute):
                root = root.value
            return isinstance(root, gast.Name) and root.id not in self.locals
        return False

    def expr_into(self, node: gast.expr, target: str) -> None:
        """Emit statements that leave the value of ``node`` in ``target``."""
        if isinstance(node, gast.Name) and node.id == target:
            # ``v = v`` does nothing; as a copy, its backward would reset dv after adding dv.
            self.out.append(gast.copy_location(gast.Pass(), self.line))
            return None
        if isinstance(node, gast.IfExp):
            return self.conditional(node, target)
        if self.atomic(node) or not self.is_varied(node):
            prim = Prim("copy", [node]) if isinstance(node, gast.Name) and self.is_varied(node) else None
            return self.emit(target, node, prim)
        value, prim = self.primitive(node)
        reads = {n.id for a in prim.args for n in gast.walk(a) if isinstance(n, gast.Name)}
        if target in reads:
            fresh = self.namer.fresh(f"{target}_next")
            self.single_use.add(fresh)
            self.emit(fresh, value, prim)
            self.emit(target, name(fresh), Prim("copy", [name(fresh)]))
        else:
            self.emit(target, value, prim)

    def conditional(self, node: gast.IfExp, target: str) -> None:
        with self.collecting() as body:
            self.expr_into(node.body, target)
        with self.collecting() as orelse:
            self.expr_into(node.orelse, target)
        self.out.append(gast.copy_location(gast.If(test=node.test, body=body, orelse=orelse), self.line))

    def keywords(self, keywords: list[gast.keyword]) -> list[gast.keyword]:
        return [gast.keyword(arg=k.arg, value=self.expr(k.value)) for k in keywords]

    def primitive(self, node: gast.expr) -> tuple[gast.expr, Prim]:
        """Split a varied, non-atomic expression into (forward expression over atoms, Prim)."""
        if isinstance(node, gast.BinOp) and type(node.op) in BINARY:
            left, right = self.expr(node.left), self.expr(node.right)
            return gast.BinOp(left=left, op=node.op, right=right), self.rule(BINARY[type(node.op)], [left, right], node)
        if isinstance(node, gast.UnaryOp) and type(node.op) in UNARY:
            operand = self.expr(node.operand)
            return gast.UnaryOp(op=node.op, operand=operand), self.rule(UNARY[type(node.op)], [operand], node)
        if isinstance(node, gast.Subscript) and self.is_index_trick(node.value):
            return self.index_trick(node)
        if isinstance(node, gast.Subscript):
            base = self.expr(node.value)
            forward_index, index_value = self.index(node.slice)
            value = gast.Subscript(value=base, slice=forward_index, ctx=gast.Load())
            return value, self.rule(operator.getitem, [base, index_value], node)
        if isinstance(node, gast.Attribute):
            func = registry.attribute_primitive(node.attr)
            base = self.expr(node.value)
            value = gast.Attribute(value=base, attr=node.attr, ctx=gast.Load())
            if func is None:  # an attribute of a structure: self.w, params.b
                return value, self.rule(getattr, [base, const(node.attr)], node)
            return value, self.rule(func, [base], node)
        if isinstance(node, gast.Call):
            return self.call(node)
        if isinstance(node, (gast.Tuple, gast.List)):
            elts = [self.expr(e) for e in node.elts]
            keys = [const(i) for i in range(len(elts))]
            return type(node)(elts=elts, ctx=gast.Load()), Prim("pack", elts, keys=keys)
        if isinstance(node, gast.Dict):
            if any(k is None for k in node.keys):
                raise UnsupportedSyntax("dict unpacking (**d) of differentiable values", self.where(node))
            keys = [self.expr(k) for k in node.keys]
            values = [self.expr(v) for v in node.values]
            return gast.Dict(keys=keys, values=values), Prim("pack", values, keys=keys)
        raise UnsupportedSyntax(f"differentiating through {type(node).__name__}", self.where(node))

    def is_index_trick(self, base: gast.expr) -> bool:
        """``np.r_`` or ``np.c_`` (a dotted name rooted outside the function): a subscript that concatenates."""
        return self.global_chain(base) and isinstance(self.resolve_callee(base), INDEX_TRICKS)

    def index_trick(self, node: gast.Subscript) -> tuple[gast.expr, Prim]:
        """``np.r_[a, b]`` as ``index_concatenate(np.r_, (a, b))``, which does exactly ``np.r_[(a, b)]``
        but is a call with a rule, so the items get their gradients (in every mode, second order too)."""
        _, index_value = self.index(node.slice)
        items = self.expr(index_value)
        func = name(self.runtime["index_concatenate"])
        return (gast.Call(func=func, args=[node.value, items], keywords=[]),
                self.rule(index_concatenate, [node.value, items], node))

    def rule(self, func: Any, args: list[gast.expr], node: gast.AST, keywords=()) -> Prim:
        rule = registry.lookup(func)
        if rule is None:
            label = getattr(func, "__name__", repr(func))
            raise NoGradientRule(label, self.where(node))
        prim = Prim("rule", args, list(keywords), rule=rule)
        for index, arg in enumerate(args):  # a local function's captured values would get no gradient there
            if isinstance(arg, gast.Name) and arg.id in self.closures and self.is_varied(arg) \
                    and (index >= len(rule.vjps) or rule.vjps[index] is None):
                raise UnsupportedSyntax(f"passing the local function {arg.id}, which captures differentiable values, "
                                        f"to {rule.qualname}, which does not differentiate it", self.where(node),
                                        "call it in a loop or comprehension instead")
        # Arguments the function depends on but whose derivative the rule does not have (a cdf's shape
        # parameters): a None vjp there would silently give them no gradient.
        for index, why in rule.extra.get("no_derivative", {}).items():
            if index < len(args) and self.is_varied(args[index]):
                raise NoGradientRule(f"{rule.qualname} with respect to {argument_label(prim, index)}",
                                     self.where(node), why)
        return prim

    def call(self, node: gast.Call) -> tuple[gast.expr, Prim]:
        func = node.func
        method = isinstance(func, gast.Attribute) and not self.global_chain(func.value)
        obj = self.resolve_callee(func)
        label = _source_of(func)
        spread = any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        if obj is dict and not node.args and node.keywords and all(k.arg is not None for k in node.keywords):
            literal = gast.Dict(keys=[const(k.arg) for k in node.keywords], values=[k.value for k in node.keywords])
            return self.primitive(gast.copy_location(literal, node))  # dict(a=x, b=y) is {"a": x, "b": y}
        if obj is None:
            if method and func.attr in _CONTAINER_METHODS:
                raise NoGradientRule(f"the method .{func.attr}() of a dict, list, tuple or str", self.where(node),
                                     "a loop over list(d) that reads d[k] for a dict's values, or a list "
                                     "literal or comprehension for a list's")
            if method or isinstance(func, gast.Name) and func.id in self.locals \
                    or not isinstance(func, (gast.Name, gast.Attribute)):
                return self.dynamic(node, method)  # a value called: f(y), self.predict(X), layers[i](h)
            raise NoGradientRule(label, self.where(node))
        if inspect.isclass(obj) and (issubclass(obj, tuple) and hasattr(obj, "_fields")
                                     or dataclasses.is_dataclass(obj)) and not spread:
            return self.construct(obj, node, label)
        if registry.lookup(obj) is not None and any(isinstance(a, gast.Starred) for a in node.args):
            return self.dynamic(node, False)  # f(*args): its rule's arguments are bound when the call runs
        takes_mapping = inspect.isfunction(obj) and not is_library_function(obj) and any(
            p.kind is p.VAR_KEYWORD for p in signature_of(obj).parameters.values())
        if takes_mapping and registry.lookup(obj) is None and not recomputes(obj):
            return self.dynamic(node, False)  # a **kwargs parameter: bound when the call runs, as Python binds it
        if spread and registry.lookup(obj) is None or not inspect.isfunction(obj) and registry.lookup(obj) is None \
                and callable(obj) and not method and not inspect.isclass(obj) and not inspect.isbuiltin(obj) \
                and not recomputes(obj):  # a checkpointed function is linked below, as a user function
            target = bound_parts(obj)[0]
            if not inspect.isfunction(target) and registry.lookup(target) is None:
                raise NoGradientRule(label, self.where(node))
            return self.dynamic(node, False)  # a bound method, a partial, a callable object, or f(*xs)
        if obj is dict and node.keywords and len(node.args) <= 1 and not spread:
            return self.dict_with(node)
        args = [self.expr(a) for a in node.args]
        keywords = self.keywords(node.keywords)
        if method:
            base = self.expr(func.value)
            prim, args, keywords = self.rule_call(obj, [base] + args, keywords, node, label, func.attr)
            forward = gast.Call(func=gast.Attribute(value=base, attr=func.attr, ctx=gast.Load()),
                                args=args[1:], keywords=keywords)
            return forward, prim
        if registry.lookup(obj) is not None:
            prim, args, keywords = self.rule_call(obj, args, keywords, node, label)
            return gast.Call(func=func, args=args, keywords=keywords), prim
        if is_library_function(obj):  # libraries are primitives: a rule, or refused (never traced into)
            raise NoGradientRule(label, self.where(node), library_remedy(obj, label))
        if inspect.isfunction(obj) or recomputes(obj):  # a checkpointed callee is linked as a user function
            args = self.bind(obj, args, keywords, node)
            return gast.Call(func=func, args=args, keywords=[]), Prim("call", args, callee=obj, func=func)
        raise NoGradientRule(label, self.where(node))

    def dict_with(self, node: gast.Call) -> tuple[gast.expr, Prim]:
        """``dict(pairs, b=x)``: ``dict_with(pairs, {"b": x})``, a call with a rule for both (rules/iterables.py),
        since dict's keywords are entries, not parameters."""
        pairs = self.expr(node.args[0]) if node.args else gast.Tuple(elts=[], ctx=gast.Load())
        entries = self.namer.fresh("entries")
        self.expr_into(gast.Dict(keys=[const(k.arg) for k in node.keywords],
                                 values=[k.value for k in node.keywords]), entries)
        entries = name(entries)
        return (gast.Call(func=name(self.runtime["dict_with"]), args=[pairs, entries], keywords=[]),
                self.rule(dict_with, [pairs, entries], node))

    def construct(self, cls: type, node: gast.Call, label: str) -> tuple[gast.expr, Prim]:
        """``Params(w, b=b0)`` of a NamedTuple or dataclass: a pack of its fields, by field (the
        cotangent of a NamedTuple is a tuple, of a dataclass a dict keyed by field name)."""
        namedtuple = issubclass(cls, tuple)
        if not namedtuple:
            if not cls.__dataclass_params__.init or hasattr(cls, "__post_init__"):
                raise UnsupportedSyntax(f"constructing the dataclass {label} from differentiable values, whose "
                                        f"{'__post_init__' if cls.__dataclass_params__.init else '__init__'} "
                                        f"may change what its fields hold", self.where(node),
                                        "compute the fields first and construct it without __post_init__, "
                                        "or use a NamedTuple")
        fields = list(cls._fields) if namedtuple else \
            [f.name for f in dataclasses.fields(cls) if f.init]
        try:
            bound = inspect.signature(cls).bind(*node.args, **{k.arg: k.value for k in node.keywords})
        except (TypeError, ValueError) as error:
            raise UnsupportedSyntax(f"this call of {label} ({error})", self.where(node)) from None
        atoms, keywords = [], []
        for field_name in fields:
            value = bound.arguments.get(field_name)
            if value is None:
                default = inspect.signature(cls).parameters[field_name].default
                if not isinstance(default, (int, float, complex, str, bool, type(None))):
                    raise UnsupportedSyntax(f"the default value of {label}'s field {field_name}", self.where(node),
                                            "pass it explicitly")
                value = const(default)
            atom = self.expr(value)
            atoms.append(atom)
            keywords.append(gast.keyword(arg=field_name, value=atom))
        keys = [const(i) for i in range(len(fields))] if namedtuple else [const(f) for f in fields]
        return gast.Call(func=node.func, args=[], keywords=keywords), Prim("pack", atoms, keys=keys)

    def dynamic(self, node: gast.Call, method: bool) -> tuple[gast.expr, Prim]:
        """A call whose callee is a value, resolved when it runs (calls.py): ``[callee, *atoms]``, or
        ``[obj, *atoms]`` with ``method`` the attribute called on ``obj`` (on ``super(C, obj)``: ``C`` is
        then the last atom, and ``after`` says so)."""
        func = node.func
        owner = func.value if method else None
        after = None
        if isinstance(owner, gast.Call) and isinstance(owner.func, gast.Name) and owner.func.id == "super" \
                and self.resolve_callee(owner.func) is super and len(owner.args) == 2 and not owner.keywords:
            after, owner = owner.args
        first = self.expr(owner if method else func)
        atoms, forward_args, starred, mapping = [], [], [], []
        for arg in node.args:
            if isinstance(arg, gast.Starred):
                atom = self.expr(arg.value)
                starred.append(len(atoms) + 1)
                forward_args.append(gast.Starred(value=atom, ctx=gast.Load()))
            else:
                atom = self.expr(arg)
                forward_args.append(atom)
            atoms.append(atom)
        keywords = []
        for k in node.keywords:
            atom = self.expr(k.value)
            if k.arg is None:
                mapping.append(len(atoms) + 1)
                atoms.append(atom)
            keywords.append(gast.keyword(arg=k.arg, value=atom))
        receiver = first
        if after is not None:  # super(C, obj).m(...): the method found after C in obj's class's MRO
            after = self.expr(after)
            atoms.append(after)
            receiver = gast.Call(func=name("super"), args=[after, first], keywords=[])
        callee = gast.Attribute(value=receiver, attr=func.attr, ctx=gast.Load()) if method else first
        forward = gast.Call(func=callee, args=forward_args, keywords=keywords)
        prim = Prim("dynamic", [first] + atoms, [k for k in keywords if k.arg is not None],
                    method=func.attr if method else None, starred=tuple(starred), mapping=tuple(mapping),
                    source=None if isinstance(func, (gast.Name, gast.Attribute)) else _source_of(func),
                    after=after is not None)
        return forward, prim

    def rule_call(self, func: Any, args: list[gast.expr], keywords: list[gast.keyword], node: gast.Call,
                  label: str, method: str | None = None) -> tuple[Prim, list[gast.expr], list[gast.keyword]]:
        """A call of a primitive that has a rule, as (its Prim, the call's positional arguments, its
        keywords); ``method``: called as ``args[0].method(*args[1:])`` (the object comes first).

        A rule differentiates positional arguments only (``rule.vjps[i]`` is the
        vjp of argument ``i``), so a differentiable value passed by keyword is
        moved to its parameter's position, as in ``np.clip(x, a_min=lo, a_max=hi)``
        -> ``(x, lo, hi)`` or ``x.clip(max=hi)`` -> ``(x, None, hi)``, filling the
        positions before it with the keywords that name them or the parameters'
        defaults. The call itself is written the same way where the called
        object takes that many positional arguments (a method's own signature
        may take fewer than its function's); else it stays as written. Where no
        position can be found (a keyword-only parameter, a ``**mapping``,
        ``*args`` before it), the call is refused rather than the keyword's
        gradient dropped.
        """
        if registry.lookup(func) is None or not any(self.is_varied(k.value) for k in keywords):
            return self.rule(func, args, node, keywords), args, keywords

        def refuse(keyword: gast.keyword, why: str) -> UnsupportedSyntax:
            shown = f"{keyword.arg}=..." if keyword.arg is not None else "**..."
            return UnsupportedSyntax(f"passing a differentiable value to {label} by keyword ({shown})",
                                     self.where(node), f"{why}; pass it positionally")

        varied = [k for k in keywords if self.is_varied(k.value)]
        if any(isinstance(a, gast.Starred) for a in node.args):
            raise refuse(varied[0], "its position is not known where *args come before it")
        for k in keywords:
            if k.arg is None:
                raise refuse(varied[0] if varied[0].arg is not None else k,
                             "its position is not known beside a **mapping")
        params = positional_parameters(func)
        if params is None:
            raise refuse(varied[0], f"the signature of {label} cannot be read to find its position")
        # Where each keyword goes: the parameter of that name (a method's own name first: ``x.clip(min=)``
        # is np.clip's a_min; obj.name(*args) differentiates as func(obj, *args)).
        position = {p.name: i for i, p in enumerate(params) if p.kind is p.POSITIONAL_OR_KEYWORD}
        own = positional_parameters(getattr(np.ndarray, method, None)) if method else None
        for i, p in enumerate(own or ()):
            if i and p.kind is p.POSITIONAL_OR_KEYWORD:
                position[p.name] = i
        slots = {}
        for k in keywords:
            if k.arg in position:
                slots[position[k.arg]] = k
        for k in varied:
            if k.arg not in position:
                raise refuse(k, f"{label} has no positional parameter {k.arg!r} (adsrc differentiates a "
                                f"rule's positional arguments)")
            if position[k.arg] < len(args):
                raise refuse(k, f"{k.arg!r} is given positionally as well")
        last = max(position[k.arg] for k in varied)
        out, names, moved = list(args), {}, set()
        for i in range(len(args), last + 1):
            keyword = slots.get(i)
            if keyword is not None:
                out.append(keyword.value)
                names[i] = keyword.arg
                moved.add(id(keyword))
                continue
            param = own[i] if own is not None and i < len(own) else params[i]
            default = None if param.default is np._NoValue else param.default  # NumPy's "not given"
            if default is param.empty or not isinstance(default, (int, float, complex, str, bool, type(None))):
                culprit = next(k for k in varied if position[k.arg] > i)
                raise refuse(culprit, f"the argument before it, {param.name!r}, has no default adsrc can pass")
            out.append(const(default))
        rest = [k for k in keywords if id(k) not in moved]
        prim = self.rule(func, out, node, rest)
        prim.names = names
        if own is not None and last >= len(own):
            return prim, args, keywords  # the method takes fewer positional arguments: as written
        return prim, out, rest

    def bind(self, callee: Any, args: list, keywords: list, node: gast.AST) -> list[gast.expr]:
        """A user call's arguments, in parameter order, with defaults filled in."""
        try:
            signature = signature_of(callee)
            bound = signature.bind(*args, **{k.arg: k.value for k in keywords})
        except (TypeError, ValueError) as error:
            raise UnsupportedSyntax(f"this call of {callee.__name__} ({error})", self.where(node)) from None
        out = []
        for param in signature.parameters.values():
            if param.kind is param.VAR_POSITIONAL:  # the callee's adjoint takes *args as one tuple
                out.append(self.expr(gast.Tuple(elts=list(bound.arguments.get(param.name, ())), ctx=gast.Load())))
                continue
            if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
                raise UnsupportedSyntax(f"calling {callee.__name__}, which has a {param.kind.description} "
                                        f"parameter, with a differentiable argument", self.where(node))
            if param.name in bound.arguments:
                out.append(bound.arguments[param.name])
            elif isinstance(param.default, (int, float, complex, str, bool, type(None))):
                out.append(const(param.default))
            else:
                raise UnsupportedSyntax(f"the default value of {callee.__name__}'s parameter {param.name}",
                                        self.where(node), "pass it explicitly")
        return out

    def index(self, node: gast.expr) -> tuple[gast.expr, gast.expr]:
        """An index as (forward subscript syntax, the same index as a value for the vjp)."""
        if isinstance(node, gast.Slice):
            parts = [self.expr(p) if p is not None else None for p in (node.lower, node.upper, node.step)]
            forward = gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
            return forward, call("slice", *[p if p is not None else const(None) for p in parts])
        if isinstance(node, gast.Tuple):
            pairs = [self.index(e) for e in node.elts]
            return (gast.Tuple(elts=[p[0] for p in pairs], ctx=gast.Load()),
                    gast.Tuple(elts=[p[1] for p in pairs], ctx=gast.Load()))
        atom = self.expr(node)
        return atom, atom


# Methods of Python's own containers: without a rule of their own, a call of one on a differentiated value is
# refused before anything runs (a user object's method of the same name is refused with them).
_CONTAINER_METHODS = frozenset(name for kind in (dict, list, tuple, str, set) for name in dir(kind)
                               if not name.startswith("_"))


def _source_of(node: gast.AST) -> str:
    """The source text of an expression, for messages."""
    import ast

    return ast.unparse(gast.gast_to_ast(node))


def local_names(node: gast.FunctionDef) -> set[str]:
    names = {a.id for a in node.args.args + node.args.kwonlyargs}
    for child in name_nodes(node):
        if isinstance(child.ctx, (gast.Store, gast.Param)):
            names.add(child.id)
    return names


def to_anf(parsed: Parsed, node: gast.FunctionDef, namer: Namer, activity: Activity,
           runtime: dict[str, str]) -> gast.FunctionDef:
    anf = ANF(parsed, namer, activity, local_names(node))
    anf.runtime = runtime
    node.body = anf.block(node.body)
    anno.set(node, anno.SINGLE_USE, anf.single_use)
    return node
