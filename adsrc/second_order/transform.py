"""Forward mode for any Python function: how adsrc differentiates code it generated (second order).

Input: a live Python function whose source is readable: a generated eager
adjoint (real Python, registered in linecache by backend/codegen.py), a rule's vjp
function, a helper either of them calls. Output: its JVP, a function
``f_jvp(tangents, ktangents, *args, **kwargs) -> (value, tangent)`` where
``tangents`` holds the tangents of the positional arguments and
``ktangents`` those of the keyword arguments.

Unlike forward.py, this pass does not go through the fence, desugar or ANF:
generated adjoints define closures, grow and pop a tape, and rule code writes
into arrays, so the pass takes Python as it comes. It splits every
expression into one operation per statement, gives every local variable a
tangent (``x`` gets ``dx``, renamed if taken), and leaves the meaning of each
call to the run-time dispatcher (dispatch.py, named ``fwd`` in the
generated code), which knows rules, vjps, closures and callee adjoints.
Control flow is kept as written. Nested functions (the pullback) are
transformed in place and marked as being in the JVP convention. A
construct the pass cannot handle makes the whole function "opaque": the
dispatcher then calls it as it is, and raises only if a tangent would be lost.
"""
from __future__ import annotations

import copy
from typing import Callable

import gast

from ..ir.build import assign, call, const, name, store
from ..errors import UnsupportedSyntax
from ..ir.naming import Namer, Rename


class AnyForward:
    """Transforms one function (and the functions defined inside it) statement by statement."""

    def __init__(self, namer: Namer, fwd: str, where: str, level: int = 1):
        self.namer = namer
        self.fwd = fwd
        self.where = where
        self.level = level  # the order of the tangents this code carries (dispatch.py: call_at)
        self.tangents: dict[str, str] = {}
        self.scopes: list[set[str]] = []
        self.nonlocals: list[set[str]] = []  # per function: tangents of enclosing arrays it writes into
        self.out: list[gast.stmt] = []

    # -- names ---------------------------------------------------------------
    def tangent(self, var: str) -> str:
        if var not in self.tangents:
            self.tangents[var] = self.namer.adjoint(var)
        return self.tangents[var]

    def local(self, var: str) -> bool:
        return any(var in scope for scope in self.scopes)

    def zero(self) -> gast.expr:
        return gast.Attribute(value=name(self.fwd), attr="zero", ctx=gast.Load())

    def helper(self, func: str, *args: gast.expr, keywords=()) -> gast.Call:
        return gast.Call(func=gast.Attribute(value=name(self.fwd), attr=func, ctx=gast.Load()),
                         args=list(args), keywords=list(keywords))

    def dispatch(self, func: str, *args: gast.expr, keywords=()) -> gast.Call:
        """``fwd.call(...)`` (``fwd.method``) at level 1; ``fwd.call_at(level, ...)`` above it, so that the
        dispatcher tells a function in this code's convention from one of the code it differentiates."""
        if self.level == 1:
            return self.helper(func, *args, keywords=keywords)
        return self.helper(f"{func}_at", const(self.level), *args, keywords=keywords)

    def fresh(self, hint: str) -> str:
        var = self.namer.fresh(hint)
        self.scopes[-1].add(var)
        return var

    def fail(self, construct: str) -> None:
        raise UnsupportedSyntax(construct, self.where)

    def emit(self, *stmts: gast.stmt) -> None:
        self.out.extend(stmts)

    def collect(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        saved, self.out = self.out, []
        try:
            for stmt in stmts:
                self.stmt(stmt)
            return self.out or [gast.Pass()]
        finally:
            self.out = saved

    # -- functions -------------------------------------------------------------
    def function(self, node: gast.FunctionDef, top: bool = False) -> gast.FunctionDef:
        if node.decorator_list and not top:
            self.fail("a decorated nested function")
        args = node.args
        self.scopes.append(_own_locals(node))
        self.nonlocals.append(set())
        try:
            t_in, k_in = self.fresh("tangents"), self.fresh("ktangents")
            positional = [a.id for a in args.posonlyargs + args.args]
            prologue = [assign(self.tangent(p), self.helper("arg_tangent", name(t_in), name(k_in), const(i), const(p)))
                        for i, p in enumerate(positional)]
            if args.vararg is not None:
                prologue.append(assign(self.tangent(args.vararg.id),
                                       self.helper("vararg_tangents", name(t_in), const(len(positional)))))
            for a in args.kwonlyargs:
                prologue.append(assign(self.tangent(a.id), self.helper(
                    "arg_tangent", name(t_in), name(k_in), const(1 << 30), const(a.id))))
            if args.kwarg is not None:
                named = tuple(positional + [a.id for a in args.kwonlyargs])
                prologue.append(assign(self.tangent(args.kwarg.id), self.helper("kwarg_tangents", name(k_in), const(named))))
            body = [s for s in node.body if not _is_docstring(s)]
            body = self.collect(body)
            if not body or not isinstance(body[-1], gast.Return):
                body.append(gast.Return(value=gast.Tuple(elts=[const(None), self.zero()], ctx=gast.Load())))
            params = [gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None) for n in (t_in, k_in)]
            new_args = gast.arguments(posonlyargs=params + list(args.posonlyargs), args=list(args.args),
                                      vararg=args.vararg, kwonlyargs=list(args.kwonlyargs),
                                      kw_defaults=list(args.kw_defaults), kwarg=args.kwarg,
                                      defaults=list(args.defaults))
            declared = [gast.Nonlocal(names=sorted(self.nonlocals[-1]))] if self.nonlocals[-1] else []
            return gast.FunctionDef(name=node.name, args=new_args, body=declared + prologue + body, decorator_list=[],
                                    returns=None, type_comment=None, type_params=[])
        finally:
            self.scopes.pop()
            self.nonlocals.pop()

    # -- statements --------------------------------------------------------------
    def stmt(self, node: gast.stmt) -> None:
        handler = getattr(self, f"stmt_{type(node).__name__}", None)
        if handler is None:
            self.fail(f"forward mode through a {type(node).__name__} statement")
        handler(node)

    def stmt_Assign(self, node: gast.Assign) -> None:
        value, tangent = self.expr(node.value)
        for target in node.targets:
            self.assign_to(target, value, tangent)

    def stmt_AnnAssign(self, node: gast.AnnAssign) -> None:
        if node.value is not None:
            self.stmt_Assign(gast.Assign(targets=[node.target], value=node.value, type_comment=None))

    def stmt_AugAssign(self, node: gast.AugAssign) -> None:
        target = node.target
        if isinstance(target, gast.Name):
            value = gast.BinOp(left=name(target.id), op=node.op, right=node.value)
            return self.stmt_Assign(gast.Assign(targets=[store(target.id)], value=value, type_comment=None))
        if isinstance(target, gast.Subscript) and isinstance(node.op, (gast.Add, gast.Sub)):
            base, dbase = self.subscript_base(target)
            index = self.atom(self.index_value(target.slice), "index")
            item, ditem = self.expr(node.value)
            self.emit(gast.AugAssign(target=gast.Subscript(value=name(base), slice=index, ctx=gast.Store()),
                                     op=node.op, value=item))
            self.emit(assign(dbase, self.helper("store", name(dbase), name(base), index, ditem,
                                                const(type(node.op).__name__))))
            return None
        self.fail(f"forward mode through augmented assignment to {type(target).__name__}")

    def stmt_Expr(self, node: gast.Expr) -> None:
        value = node.value
        if isinstance(value, gast.Constant):
            return None
        if isinstance(value, gast.Call):
            # Called for its effect: it may write into an argument, whose tangent must be writable then.
            func = value.func
            if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                    and func.value.id in self.scopes[-1] and func.attr in ("append", "extend", "insert"):
                var = func.value.id
                self.emit(assign(self.tangent(var), self.helper("own_list", name(self.tangent(var)), name(var))))
            for arg in value.args:
                if isinstance(arg, gast.Name) and arg.id in self.scopes[-1]:
                    self.emit(assign(self.tangent(arg.id), self.helper("own", name(self.tangent(arg.id)), name(arg.id))))
        self.expr(value)
        return None

    def stmt_If(self, node: gast.If) -> None:
        self.emit(gast.If(test=node.test, body=self.collect(node.body),
                          orelse=self.collect(node.orelse) if node.orelse else []))

    def stmt_While(self, node: gast.While) -> None:
        self.emit(gast.While(test=node.test, body=self.collect(node.body),
                             orelse=self.collect(node.orelse) if node.orelse else []))

    def stmt_With(self, node: gast.With) -> None:
        """``with np.errstate(...)``: the same context around the body's values and tangents."""
        bound = [assign(self.tangent(item.optional_vars.id), self.zero()) for item in node.items
                 if isinstance(item.optional_vars, gast.Name)]  # what the context gives has no tangent
        self.emit(gast.With(items=node.items, body=bound + self.collect(node.body), type_comment=None))

    def stmt_For(self, node: gast.For) -> None:
        seq, dseq = self.expr(node.iter)
        item, ditem = self.fresh("item"), self.fresh("ditem")
        saved, self.out = self.out, []
        self.assign_to(node.target, name(item), name(ditem))
        head, self.out = self.out, saved
        body = head + self.collect(node.body)
        pair = gast.Tuple(elts=[store(item), store(ditem)], ctx=gast.Store())
        self.emit(gast.For(target=pair, iter=self.helper("iterate", seq, dseq), body=body,
                           orelse=self.collect(node.orelse) if node.orelse else [], type_comment=None))

    def stmt_Return(self, node: gast.Return) -> None:
        value, tangent = self.expr(node.value) if node.value is not None else (const(None), self.zero())
        self.emit(gast.Return(value=gast.Tuple(elts=[value, tangent], ctx=gast.Load())))

    def stmt_FunctionDef(self, node: gast.FunctionDef) -> None:
        self.emit(self.function(node))
        marked = (name(node.name),) if self.level == 1 else (name(node.name), const(self.level))
        self.emit(assign(node.name, self.helper("jvp_function", *marked)),
                  assign(self.tangent(node.name), self.zero()))

    def _keep(self, node: gast.stmt) -> None:
        self.emit(node)

    def stmt_Nonlocal(self, node: gast.Nonlocal) -> None:
        """An enclosing function's names (code generated here, differentiated again): their tangents too."""
        self.emit(gast.Nonlocal(names=list(node.names) + [self.tangent(n) for n in node.names]))

    stmt_Pass = stmt_Break = stmt_Continue = stmt_Raise = stmt_Assert = stmt_ImportFrom = _keep

    def assign_to(self, target: gast.expr, value: gast.expr, tangent: gast.expr) -> None:
        """``target = value`` and the matching tangent assignment, unpacking as Python does."""
        if isinstance(target, gast.Name):
            self.emit(assign(target.id, value), assign(self.tangent(target.id), tangent))
        elif isinstance(target, (gast.Tuple, gast.List)):
            starred = [k for k, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
            elts = [e.value if isinstance(e, gast.Starred) else e for e in target.elts]
            names = [e.id if isinstance(e, gast.Name) else self.fresh("part") for e in elts]
            stores = [store(n) for n in names]
            for k in starred:  # a, *rest, b = value: rest is a list of the items between
                stores[k] = gast.Starred(value=stores[k], ctx=gast.Store())
            if starred:  # kept under a name of its own: the helper below reads it after the targets are bound
                whole = self.fresh("unpacked")
                self.emit(assign(whole, value))
                value = name(whole)
            self.emit(assign(gast.Tuple(elts=stores, ctx=gast.Store()), value))
            parts = self.helper("unpack", tangent, const(len(names))) if not starred else self.helper(
                "unpack_starred", tangent, name(whole), const(starred[0]), const(len(names) - 1 - starred[0]))
            self.emit(assign(gast.Tuple(elts=[store(self.tangent(n)) for n in names], ctx=gast.Store()), parts))
            target = gast.Tuple(elts=elts, ctx=gast.Store())
            for element, n in zip(target.elts, names):
                if not isinstance(element, gast.Name):
                    self.assign_to(element, name(n), name(self.tangent(n)))
        elif isinstance(target, gast.Subscript):
            base, dbase = self.subscript_base(target)
            index = self.atom(self.index_value(target.slice), "index")
            self.emit(assign(gast.Subscript(value=name(base), slice=index, ctx=gast.Store()), value))
            self.emit(assign(dbase, self.helper("store", name(dbase), name(base), index, tangent)))
        else:
            self.fail(f"forward mode through assignment to {type(target).__name__}")

    def subscript_base(self, target: gast.Subscript) -> tuple[str, str]:
        """The written array and its tangent: a local, or a local of an enclosing function (the pullback
        restoring what the forward sweep overwrote), whose tangent this function then rebinds."""
        base = target.value.id if isinstance(target.value, gast.Name) else None
        if base is None or not any(base in scope for scope in self.scopes):
            self.fail("forward mode through assignment into a subscript of anything but a local variable")
        if base not in self.scopes[-1]:
            self.nonlocals[-1].add(self.tangent(base))
        return base, self.tangent(base)

    # -- expressions: each returns (primal atom, tangent atom) -------------------------
    def atom(self, node: gast.expr, hint: str) -> gast.expr:
        if isinstance(node, (gast.Name, gast.Constant)):
            return node
        var = self.fresh(hint)
        self.emit(assign(var, node))
        return name(var)

    def result(self, value: gast.expr, tangent_of: Callable[[gast.expr], gast.expr], hint: str):
        var = self.fresh(hint)
        self.emit(assign(var, value))
        dvar = self.tangent(var)
        self.emit(assign(dvar, tangent_of(name(var))))
        return name(var), name(dvar)

    def expr(self, node: gast.expr) -> tuple[gast.expr, gast.expr]:
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is None:
            self.fail(f"forward mode through {type(node).__name__}")
        return handler(node)

    def expr_Constant(self, node):
        return node, self.zero()

    def expr_Name(self, node):
        return name(node.id), (name(self.tangent(node.id)) if self.local(node.id) else self.zero())

    def _primal_only(self, node):
        """Comparisons, boolean tests, f-strings, lambdas: values with no tangent."""
        return self.atom(node, "value"), self.zero()

    expr_Compare = expr_JoinedStr = expr_Lambda = _primal_only

    def expr_UnaryOp(self, node):
        if isinstance(node.op, (gast.Not, gast.Invert)):
            return self._primal_only(node)
        a, da = self.expr(node.operand)
        op = type(node.op).__name__
        return self.result(gast.UnaryOp(op=node.op, operand=a),
                           lambda t: self.helper("unary", const(op), t, a, da), "value")

    def expr_BinOp(self, node):
        a, da = self.expr(node.left)
        b, db = self.expr(node.right)
        op = type(node.op).__name__
        return self.result(gast.BinOp(left=a, op=node.op, right=b),
                           lambda t: self.helper("binary", const(op), t, a, b, da, db), "value")

    def expr_BoolOp(self, node):
        """``a or b`` is one of its operands: evaluated left to right, stopping as Python does."""
        var = self.fresh("either")
        first, dfirst = self.expr(node.values[0])
        self.emit(assign(var, first), assign(self.tangent(var), dfirst))
        for operand in node.values[1:]:
            saved, self.out = self.out, []
            value, tangent = self.expr(operand)
            self.emit(assign(var, value), assign(self.tangent(var), tangent))
            branch, self.out = self.out, saved
            test = name(var) if isinstance(node.op, gast.And) else gast.UnaryOp(op=gast.Not(), operand=name(var))
            self.emit(gast.If(test=test, body=branch, orelse=[]))
        return name(var), name(self.tangent(var))

    def expr_IfExp(self, node):
        var = self.fresh("choice")
        branches = []
        for part in (node.body, node.orelse):
            saved, self.out = self.out, []
            value, tangent = self.expr(part)
            self.emit(assign(var, value), assign(self.tangent(var), tangent))
            branches.append(self.out)
            self.out = saved
        self.emit(gast.If(test=node.test, body=branches[0], orelse=branches[1]))
        return name(var), name(self.tangent(var))

    def expr_Attribute(self, node):
        root = node
        while isinstance(root, gast.Attribute):
            root = root.value
        if isinstance(root, gast.Name) and not self.local(root.id):
            return self.atom(node, node.attr), self.zero()  # a module's attribute, a global's
        base, dbase = self.expr(node.value)
        return self.result(gast.Attribute(value=base, attr=node.attr, ctx=gast.Load()),
                           lambda t: self.helper("attribute", base, dbase, const(node.attr), t), node.attr)

    def expr_Subscript(self, node):
        base, dbase = self.expr(node.value)
        index = self.atom(self.index_value(node.slice), "index")
        return self.result(gast.Subscript(value=base, slice=index, ctx=gast.Load()),
                           lambda t: self.helper("subscript", dbase, index), "item")

    def index_value(self, node: gast.expr) -> gast.expr:
        """An index written with slice syntax (``a:b``) as a value (``slice(a, b)``)."""
        if isinstance(node, gast.Slice):
            parts = [p if p is not None else const(None) for p in (node.lower, node.upper, node.step)]
            return call("slice", *parts)
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index_value(e) for e in node.elts], ctx=gast.Load())
        return node

    def elements(self, elts: list[gast.expr]) -> tuple[list[gast.expr], list[gast.expr]]:
        values, tangents = [], []
        for elt in elts:
            if isinstance(elt, gast.Starred):
                v, dv = self.expr(elt.value)
                values.append(gast.Starred(value=v, ctx=gast.Load()))
                tangents.append(gast.Starred(value=self.helper("star", dv, v), ctx=gast.Load()))
            else:
                v, dv = self.expr(elt)
                values.append(v)
                tangents.append(dv)
        return values, tangents

    def expr_Tuple(self, node):
        values, tangents = self.elements(node.elts)
        tangent = self.helper("TangentTuple", gast.Tuple(elts=tangents, ctx=gast.Load()))
        return self.result(gast.Tuple(elts=values, ctx=gast.Load()), lambda t: tangent, "items")

    def expr_List(self, node):
        values, tangents = self.elements(node.elts)
        tangent = self.helper("TangentList", gast.List(elts=tangents, ctx=gast.Load()))
        return self.result(gast.List(elts=values, ctx=gast.Load()), lambda t: tangent, "items")

    def expr_Dict(self, node):
        keys = [None if k is None else self.atom(k, "key") for k in node.keys]
        pairs = [self.expr(v) for v in node.values]
        tangents = [t if k is not None else self.helper("keyword_tangents", t, v)  # {**m}: m's entries
                    for k, (v, t) in zip(keys, pairs)]
        tangent = self.helper("TangentDict", gast.Dict(keys=[copy.deepcopy(k) for k in keys], values=tangents))
        return self.result(gast.Dict(keys=keys, values=[p[0] for p in pairs]), lambda t: tangent, "mapping")

    def expr_Call(self, node):
        func = node.func
        args, targs = self.elements(node.args)
        keywords, kt_keys, kt_values = [], [], []
        for kw in node.keywords:
            v, dv = self.expr(kw.value)
            keywords.append(gast.keyword(arg=kw.arg, value=v))
            kt_keys.append(const(kw.arg) if kw.arg is not None else None)
            kt_values.append(dv if kw.arg is not None else self.helper("keyword_tangents", dv, v))
        ktangents = gast.Dict(keys=kt_keys, values=kt_values)
        tangents = gast.Tuple(elts=targs, ctx=gast.Load())
        root = func
        while isinstance(root, gast.Attribute):
            root = root.value
        is_method = isinstance(func, gast.Attribute) and not (isinstance(root, gast.Name) and not self.local(root.id))
        var = self.fresh("value")
        dvar = self.tangent(var)
        pair = gast.Tuple(elts=[store(var), store(dvar)], ctx=gast.Store())
        if is_method:
            obj, dobj = self.expr(func.value)
            self.emit(assign(pair, self.dispatch("method", obj, dobj, const(func.attr), tangents, ktangents, *args,
                                                 keywords=keywords)))
        else:
            callee = func if isinstance(func, (gast.Name, gast.Attribute)) else self.atom(func, "callee")
            self.emit(assign(pair, self.dispatch("call", callee, tangents, ktangents, *args, keywords=keywords)))
        return name(var), name(dvar)

    def expr_ListComp(self, node):
        """A list comprehension (or a generator, consumed at once) becomes a loop that appends."""
        items = self.fresh("items")
        renames = {}
        for gen in node.generators:
            for n in gast.walk(gen.target):
                if isinstance(n, gast.Name):
                    renames[n.id] = self.fresh(n.id)
        first_iter = copy.deepcopy(node.generators[0].iter)  # evaluated in the enclosing scope, not renamed
        node = Rename(renames).visit(copy.deepcopy(node))
        node.generators[0].iter = first_iter
        body: list[gast.stmt] = [gast.Expr(value=gast.Call(
            func=gast.Attribute(value=name(items), attr="append", ctx=gast.Load()), args=[node.elt], keywords=[]))]
        for gen in reversed(node.generators):
            if gen.is_async:
                self.fail("forward mode through an async comprehension")
            for cond in reversed(gen.ifs):
                body = [gast.If(test=cond, body=body, orelse=[])]
            body = [gast.For(target=gen.target, iter=gen.iter, body=body, orelse=[], type_comment=None)]
        self.stmt(gast.Assign(targets=[store(items)], value=gast.List(elts=[], ctx=gast.Load()), type_comment=None))
        for stmt in body:
            self.stmt(stmt)
        return name(items), name(self.tangent(items))

    expr_GeneratorExp = expr_ListComp

    def _opaque(self, node):
        """A set or dict comprehension: run as is; its inputs must carry no tangent into floats."""
        reads = sorted({n.id for n in gast.walk(node) if isinstance(n, gast.Name) and self.local(n.id)
                        and isinstance(n.ctx, gast.Load)})
        tangents = gast.Tuple(elts=[name(self.tangent(r)) for r in reads], ctx=gast.Load())
        what = const(f"a {type(node).__name__} at {self.where}")
        return self.result(node, lambda t: self.helper("opaque_value", t, tangents, what), "value")

    expr_SetComp = expr_DictComp = _opaque



def _is_docstring(stmt: gast.stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) and isinstance(stmt.value.value, str)


def _own_locals(node: gast.FunctionDef) -> set[str]:
    """The parameters and the names a function assigns, not counting those of functions inside it."""
    args = node.args
    names = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
    stack = list(node.body)
    while stack:
        child = stack.pop()
        if isinstance(child, (gast.FunctionDef, gast.AsyncFunctionDef)):
            names.add(child.name)
            continue
        if isinstance(child, (gast.Lambda, gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)):
            continue
        if isinstance(child, gast.Name) and isinstance(child.ctx, gast.Store):
            names.add(child.id)
        stack.extend(gast.iter_child_nodes(child))
    return names
