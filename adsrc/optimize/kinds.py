"""Kind inference over an adjoint: what each name may hold, given the kinds of the arguments.

Input: an optimized adjoint (forward sweep and nested pullback), one set of
kinds per parameter (rules/templates.py: a Python type, for an array its
dtype and shape), the generated module's outside names, and the vjp
functions its header binds. Output: for every name, the set of kinds it may
hold, or None when it may hold anything (a list, a Thunk, a user object).

A name's set is the union over every assignment to it anywhere in the
adjoint, run to a fixpoint. That covers loops and branches without following
them, and a tape pop restores a value its name held when it was pushed, so it
adds nothing. A read knows more where one assignment reaches it: after
``d = d + c`` in a block, the reads of ``d`` that follow in that block see
the kinds of ``d + c`` alone, not the ``zero`` that ``d`` started as. The
walk carries the kinds of the names assigned so far in the straight-line
code (:class:`Inference`'s ``_local``): an ``if`` keeps what both branches
agree on, a loop forgets the names its body assigns (their value at the head
of an iteration comes from the previous one), and so does a tape pop, a
nested function, and any statement that binds names another way. A kind is found by
running the operation on example values of the operands' kinds (NumPy
decides what ``np.sin`` of a float returns, or the shape of a matmul): only
operators, the vjps of adsrc's own rules, and NumPy or ``math`` functions
that have one, all free of effects. Anything else is None.
"""
from __future__ import annotations

import builtins
import copy
import itertools
import math
import operator
import types
import warnings
from typing import Any, Callable

import gast
import numpy as np

from ..ir.dataflow import names, nodes, parents
from ..rules import registry, singular
from ..rules.views import written_through
from ..rules.templates import MAX_ITEMS, NONE, ZERO, Kind, constant, example, kind_of
from ..values.zero import ZeroTangent, zero
from .write_kinds import WRITE_HELPERS, write_helper_kinds

Kinds = frozenset  # of Kind; None stands for "anything"
MAX_KINDS = 4        # a name that may hold more kinds than this may hold anything
MAX_COMBINATIONS = 16
_MISSING = object()

_BINARY = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul, gast.Div: operator.truediv,
           gast.Pow: operator.pow, gast.MatMult: operator.matmul, gast.FloorDiv: operator.floordiv,
           gast.Mod: operator.mod}
_UNARY = {gast.USub: operator.neg, gast.UAdd: operator.pos}
_ATTRIBUTES = frozenset({"T", "real", "shape", "ndim", "size"})
_LAYOUT = frozenset({"ndim", "size"})  # an array's, from its kind alone: constants of a signature
_METHODS = frozenset({"dot"})  # an array's methods that templates call: pure, their result's kind by example
# NumPy functions without a gradient rule that the templates call (rules/templates.py)
_ALLOCATIONS = frozenset({np.broadcast_to, np.zeros_like, np.ones_like, np.zeros, np.ones, np.full})
# NumPy allocations whose result's kind follows from their arguments' kinds (their contents do not matter)
_EMPTY = frozenset({np.empty, np.empty_like})
_REDUCTIONS = frozenset({np.add.reduce})  # what np.sum runs, without its Python wrapper (templates call it)
_SINGULAR = frozenset({singular.times, singular.zero_where_zero})  # the zero guards the templates call: pure


def single(kinds: Kinds | None) -> Kind | None:
    """The one kind a name may hold, or None (anything, or one of several)."""
    return next(iter(kinds)) if kinds and len(kinds) == 1 else None


def join(a: Kinds | None, b: Kinds | None) -> Kinds | None:
    if a is None or b is None:
        return None
    both = a | b
    return both if len(both) <= MAX_KINDS else None


def own_rule_function(fn: Any) -> bool:
    """A vjp of one of adsrc's own rules (pure; a user's rule might print or count)."""
    inner = getattr(fn, "__wrapped__", None)
    return (getattr(inner, "__module__", None) or "").startswith("adsrc.rules")


# Functions whose result's shape depends on the values of their array arguments, not only on their kinds.
_VALUE_SHAPED = frozenset({"unique", "unique_values", "unique_counts", "unique_all", "unique_inverse", "nonzero",
                           "flatnonzero", "argwhere", "extract", "compress", "trim_zeros", "delete", "insert",
                           "histogram", "histogram_bin_edges", "bincount", "repeat", "resize", "arange",
                           "linspace", "geomspace", "logspace", "setdiff1d", "intersect1d", "union1d",
                           "setxor1d", "fromfunction", "polyfit", "roots", "select", "piecewise", "where"})


def array_method(name: str) -> bool:
    """Whether an array's method of this name computes what a NumPy function with one of adsrc's own rules
    does (``x.sum()`` is ``np.sum(x)``: rules/registry.py's defmethod), so that calling it on an example
    has no effect and gives the kind the method gives."""
    if name in _METHODS:
        return True
    primitive = registry.method_primitive(name)
    if primitive is None:
        return False
    return library_primitive(primitive) \
        or (getattr(primitive, "__module__", None) or "").startswith("adsrc.rules") and _has_own_rule(primitive)


def library_primitive(obj: Any) -> bool:
    """A NumPy or math function with one of adsrc's own rules: calling it on examples has no effect."""
    if obj in _ALLOCATIONS or obj in _EMPTY or obj in _REDUCTIONS or obj in _SINGULAR:
        return True
    if getattr(obj, "__name__", None) in _VALUE_SHAPED:
        return False
    module = getattr(obj, "__module__", None) or ""
    return (isinstance(obj, np.ufunc) or module.startswith("numpy") or module == "math") and _has_own_rule(obj)


def _has_own_rule(obj: Any) -> bool:
    """``obj`` has a rule whose vjps are adsrc's own (pure)."""
    try:
        rule = registry.lookup(obj)
    except TypeError:
        return False
    return rule is not None and any(v is not None and own_rule_function(v) for v in rule.vjps)


class Inference:
    """The kinds of the names of one adjoint (see the module docstring)."""

    def __init__(self, adjoint: gast.FunctionDef, params: dict[str, Kinds | None], namespace: dict[str, Any],
                 vjps: dict[str, Callable], runtime: dict[str, str], tape: str | None):
        self.adjoint = adjoint
        self.params = params
        self.namespace = namespace
        self.vjps = vjps
        self.rt = runtime  # accumulate, Thunk, unthunk, zero: their names in this module
        self.tape = tape
        self.assigned = {n.id for n in names(adjoint) if isinstance(n.ctx, (gast.Store, gast.Param))}
        self.write_helpers = {runtime[h]: h for h in WRITE_HELPERS if h in runtime}
        self.env: dict[str, Kinds | None] = {}
        self._memo: dict[tuple, Kinds | None] = {}
        self._passed: dict[str, bool] = {}
        self._local: dict[str, Kinds | None] = {}  # during a walk: the kinds one assignment gave, at this point
        self._at: dict[int, tuple[gast.Name, Kinds | None]] = {}  # a read's kinds where that is what reaches it
        # a nested function that rebinds an outer name makes a call an assignment: then only the unions
        self._flow = not any(isinstance(n, (gast.Nonlocal, gast.Global)) for n in nodes(adjoint))
        self.run()

    # ---- the fixpoint ---------------------------------------------------------------
    def run(self, rounds: int = 20) -> None:
        # A name starts with no kind at all (no assignment seen yet) and gains kinds until nothing changes.
        self.env = dict(self.params)
        for _ in range(rounds):
            before = dict(self.env)
            self._read, self._stale = set(), False
            self._local, self._at = {}, {}
            self._block(self.adjoint.body)
            if not self._stale or self.env == before:  # no name gained a kind after a read of it: a fixpoint
                break
        else:
            self.env, self._at = {}, {}  # no fixpoint: know nothing
        self._local = {}
        self.final = True

    def rebound(self, adjoint: gast.FunctionDef) -> "Inference":
        """These kinds for ``adjoint``, the optimizer's rewrite of this one: its passes keep every value a
        name holds (they drop statements, propagate copies, move accumulations into buffers), so each name's
        kinds still hold; a name they introduced has none (anything)."""
        other = copy.copy(self)
        other.adjoint = adjoint
        other.assigned = {n.id for n in names(adjoint) if isinstance(n.ctx, (gast.Store, gast.Param))}
        other.env = dict(self.env)
        other._at = {}  # a pass may move a read past another assignment: each name's union still holds
        return other

    final = False
    _read: set[str] = set()  # during a round, the names read so far
    _stale = False  # during a round, whether a name read gained a kind after the read (another round)

    def kinds(self, name: str) -> Kinds | None:
        if name not in self.assigned:
            return self._outside(name)
        if not self.final:
            self._read.add(name)
        found = self.env.get(name, frozenset())
        return None if self.final and not found else found  # after the fixpoint, no kind means unknown

    def _bind(self, name: str, kinds: Kinds | None) -> None:
        if kinds and any(_holds_list(k) for k in kinds) and not self._passed_only(name):
            kinds = None  # a list that code might change (append, write into) after the assignment
        self._local[name] = kinds  # where this assignment reaches, the value itself (a length stays a constant)
        kinds = None if kinds is None else frozenset(k.variable() for k in kinds)
        joined = join(self.env[name], kinds) if name in self.env else kinds
        if name in self._read and (name not in self.env or joined != self.env[name]):
            self._stale = True
        self.env[name] = joined

    def _passed_only(self, name: str) -> bool:
        """Whether every read of ``name`` passes it whole to adsrc's own vjps, a NumPy function with a rule,
        ``part``, ``len``, or a tape push, none of which changes a list it holds."""
        if name not in self._passed:
            self._passed[name] = _passed_only(self.adjoint, name, self.namespace, self.vjps, self.tape,
                                              {self.rt.get("part")} - {None})
        return self._passed[name]

    def _block(self, stmts: list[gast.stmt]) -> None:
        for stmt in stmts:
            self._stmt(stmt)

    def _forget(self, node: gast.AST) -> None:
        """The names ``node`` binds anywhere in it: their reads after it see each name's union."""
        for found in names(node):
            if type(found.ctx) is gast.Store:
                self._local.pop(found.id, None)

    def _stmt(self, stmt: gast.stmt) -> None:
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0]
            if self._is_pop(stmt.value):
                self._forget(target)
                return  # a pop restores values its names held when they were pushed
            if isinstance(target, gast.Name) and len(stmt.targets) == 1:
                kinds = self.expr(stmt.value)
                self._forget(stmt.value)  # an assignment expression inside it
                self._bind(target.id, kinds)
            else:
                self._forget(stmt.value)
                for node in gast.walk(stmt):
                    if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                        self._bind(node.id, None)
        elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            op = _BINARY.get(type(stmt.op))
            operands = [self.expr(gast.Name(stmt.target.id, gast.Load(), None, None)), self.expr(stmt.value)]
            if op is operator.pow and not _typed_power(*operands):
                op = None
            self._forget(stmt.value)
            self._bind(stmt.target.id, None if op is None else self._apply(("op", op), op, operands))
        elif isinstance(stmt, gast.For):
            element = self._element(stmt.iter)
            self._forget(stmt)  # at the head of an iteration, what the previous one left
            for node in gast.walk(stmt.target):
                if isinstance(node, gast.Name):
                    self._bind(node.id, element if isinstance(stmt.target, gast.Name) else None)
            self._block(stmt.body)
            self._forget(stmt)
            self._block(stmt.orelse)
        elif isinstance(stmt, gast.If):
            self.expr(stmt.test)
            self._forget(stmt.test)
            before = dict(self._local)
            self._block(stmt.body)
            taken, self._local = self._local, before
            self._block(stmt.orelse)
            self._local = {n: join(k, taken[n]) for n, k in self._local.items() if n in taken}
        elif isinstance(stmt, gast.FunctionDef):  # the pullback: its cotangent is the seed
            outer, self._local = self._local, {}  # it runs later: the forward sweep's names have any value
            returned = self._returned()
            if returned is not None and returned <= {Kind(int), Kind(float), Kind(np.float64)}:
                returned = frozenset(Kind(float) if k.type is int else k for k in returned)  # seed(0) is 1.0
            for arg in stmt.args.args:
                self._bind(arg.id, returned if returned is not None
                           and returned <= {Kind(float), Kind(np.float64)} else None)
            self._block(stmt.body)
            self._local = outer
            self._forget(stmt)
        else:  # a while loop, with, try: at the head of each part, and after it, its names hold any of theirs
            for part in ("body", "orelse", "handlers", "finalbody"):
                for child in getattr(stmt, part, None) or []:
                    self._forget(stmt)  # a handler may run after any statement of the body
                    self._block(child.body if isinstance(child, gast.ExceptHandler) else [child])
            self._forget(stmt)

    def _returned(self) -> Kinds | None:
        """The kinds of the value the adjoint returns beside its pullback (a gradient's seed is ``1.0``
        of that type: api/arguments.py's scalar_seed)."""
        last = self.adjoint.body[-1]
        if isinstance(last, gast.Return) and isinstance(last.value, gast.Tuple) \
                and isinstance(last.value.elts[0], gast.Name):
            return self.kinds(last.value.elts[0].id)
        return None

    def _is_pop(self, value: gast.expr) -> bool:
        return isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
            and value.func.attr == "pop" and isinstance(value.func.value, gast.Name) \
            and value.func.value.id == self.tape

    def _element(self, iterable: gast.expr) -> Kinds | None:
        if isinstance(iterable, gast.Call) and self.resolve(iterable.func) is range:
            return frozenset({Kind(int)})
        kinds = self.expr(iterable)
        if kinds is None:
            return None
        out = set()
        for kind in kinds:
            if kind.item is not None:  # a list or tuple of elements of one kind
                out.add(kind.item)
                continue
            if kind.type is not np.ndarray or not kind.shape or not kind.shape[0]:
                return None
            found = kind_of(example(kind)[0])
            if found is None:
                return None
            out.add(found)
        return frozenset(out)

    # ---- expressions ----------------------------------------------------------------
    def _outside(self, name: str) -> Kinds | None:
        """A global or closure value read by the adjoint: its kind if it is an (immutable) number. An
        outside array keeps its identity, which the compile cache checks, but may change shape in place."""
        value = self.namespace.get(name, _MISSING)
        kind = None if value is _MISSING or type(value) is np.ndarray else kind_of(value)
        return None if kind is None or kind is NONE else frozenset({kind})

    def resolve(self, node: gast.expr) -> Any:
        """The outside object a name or dotted name denotes (_MISSING for a local or unknown one)."""
        if isinstance(node, gast.Name):
            if node.id in self.assigned:
                return _MISSING
            return self.namespace.get(node.id, getattr(builtins, node.id, _MISSING))
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, types.ModuleType):
                return getattr(base, node.attr, _MISSING)
            if isinstance(base, np.ufunc) and node.attr == "reduce":
                return base.reduce  # np.add.reduce: np.sum without its Python wrapper (a template's)
        return _MISSING

    def expr(self, node: gast.expr) -> Kinds | None:
        if isinstance(node, gast.Constant):
            kind = constant(node.value)
            return None if kind is None else frozenset({kind})
        if isinstance(node, gast.Name):
            if node.id == self.rt.get("zero") and node.id not in self.assigned:
                return frozenset({ZERO})
            if self.final:
                found = self._at.get(id(node))
                return found[1] if found is not None and found[0] is node else self.kinds(node.id)
            if self._flow and node.id in self._local:
                self._at[id(node)] = (node, self._local[node.id])
                self.kinds(node.id)  # a read of the name, for the fixpoint
                return self._local[node.id]
            return self.kinds(node.id)
        if isinstance(node, gast.BinOp):
            op = _BINARY.get(type(node.op))
            operands = [self.expr(node.left), self.expr(node.right)]
            if op is operator.pow and not _typed_power(*operands):
                return None
            return None if op is None else self._apply(("op", op), op, operands)
        if isinstance(node, gast.UnaryOp):
            op = _UNARY.get(type(node.op))
            return None if op is None else self._apply(("op", op), op, [self.expr(node.operand)])
        if isinstance(node, gast.IfExp):
            return join(self.expr(node.body), self.expr(node.orelse))
        if isinstance(node, (gast.Tuple, gast.List)) and isinstance(node.ctx, gast.Load):
            return self._display(node)
        if isinstance(node, gast.Attribute):
            value = self.resolve(node)
            if value is not _MISSING:
                kind = kind_of(value)
                return None if kind is None or kind is NONE else frozenset({kind})
            if node.attr in _ATTRIBUTES:
                return self._apply(("attr", node.attr), lambda v: getattr(v, node.attr), [self.expr(node.value)],
                                   constant_result=node.attr in _LAYOUT)
            return None
        if isinstance(node, gast.Subscript):
            return self._subscript(node)
        if isinstance(node, gast.Call):
            return self._call(node)
        return None

    def _display(self, node: gast.Tuple | gast.List) -> Kinds | None:
        """``(a, b)`` or ``[a, b]`` of a few elements: each element's kinds, in order."""
        if len(node.elts) > MAX_ITEMS or any(isinstance(e, gast.Starred) for e in node.elts):
            return None
        parts = [self.expr(e) for e in node.elts]
        if any(p is None for p in parts) or math.prod(len(p) for p in parts) > MAX_COMBINATIONS:
            return None
        if any(not p for p in parts):
            return frozenset()
        made = tuple if isinstance(node, gast.Tuple) else list
        return frozenset(Kind(made, items=tuple(c)) for c in itertools.product(*parts))

    def _index(self, index: gast.expr) -> Any:
        """An index whose value does not change the kind of what it selects, as a value to select with:
        an integer constant, or any int (0 stands for it); a slice of constant bounds; a tuple of those
        and None (a new axis). _MISSING otherwise (a slice ``x[i:j]`` has a length only its values give)."""
        if isinstance(index, gast.Constant) and (type(index.value) is int or index.value is None):
            return index.value
        if isinstance(index, (gast.Name, gast.UnaryOp, gast.BinOp)) and self.expr(index) == {Kind(int)}:
            return 0  # any valid index gives an element of the same kind
        if isinstance(index, gast.Name):  # a tuple of ints held in a name (written_through's K[i][j] index)
            held = self.expr(index)
            if held and len(held) == 1:
                kind = next(iter(held))
                if kind.type is tuple and kind.items and all(k == Kind(int) for k in kind.items):
                    return (0,) * len(kind.items)
        if isinstance(index, gast.UnaryOp) and isinstance(index.operand, gast.Constant) \
                and type(index.operand.value) is int and isinstance(index.op, gast.USub):
            return -index.operand.value
        if isinstance(index, gast.Slice):
            bounds = [None if b is None else self._constant_int(b) for b in (index.lower, index.upper, index.step)]
            return _MISSING if _MISSING in bounds else slice(*bounds)
        if isinstance(index, gast.Tuple) and len(index.elts) <= MAX_ITEMS:
            parts = tuple(self._index(e) for e in index.elts)
            return _MISSING if any(p is _MISSING for p in parts) else parts
        return _MISSING

    @staticmethod
    def _constant_int(node: gast.expr) -> Any:
        if isinstance(node, gast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) \
                and isinstance(node.operand, gast.Constant) and type(node.operand.value) is int:
            return -node.operand.value
        return _MISSING

    def _subscript(self, node: gast.Subscript) -> Kinds | None:
        at = self._index(node.slice)
        if at is _MISSING:
            return None
        taken = self.expr(node.value)
        if taken is not None and isinstance(at, (slice, tuple)) and any(k.type is not np.ndarray for k in taken):
            return None  # a slice of a list: its length may be any
        if taken is not None and any(k.items is not None for k in taken) and self._constant_int(node.slice) is _MISSING:
            return None  # elements of several kinds: only a constant index says which
        return self._apply(("item", repr(at)), lambda v: v[at], [taken])

    def _call(self, node: gast.Call) -> Kinds | None:
        func = node.func
        if isinstance(func, gast.Name) and func.id in self.assigned:
            return None
        name = func.id if isinstance(func, gast.Name) else None
        if name is not None and name == self.rt.get("unthunk"):
            return self.expr(node.args[0]) if len(node.args) == 1 else None
        if name is not None and name == self.rt.get("part") and len(node.args) == 2 and not node.keywords:
            key = self._index(node.args[1])
            if key is _MISSING or type(key) is not int:
                return None
            return self._apply(("part", key), lambda v, _k: v if v is zero else v[key],
                               [self.expr(node.args[0]), self.expr(node.args[1])])
        if name is not None and name == self.rt.get("accumulate"):
            total, contribution = (self.expr(a) for a in node.args[:2])
            return self._apply(("op", operator.add), operator.add, [total, contribution])
        if name is not None and name in self.vjps:
            fn = self.vjps[name]
            if not own_rule_function(fn):
                return None
            return self._apply_call(("vjp", name), fn, node)
        if name is not None and name in self.write_helpers:
            return write_helper_kinds(self.write_helpers[name], node.args, self.expr, self.vjps)
        callee = self.resolve(func)
        if callee is _MISSING and isinstance(func, gast.Attribute) and array_method(func.attr):
            return self._method(node)
        if callee is slice and not node.keywords and len(node.args) <= 3:  # what x[a:b] passes to a vjp
            bounds = [None if isinstance(a, gast.Constant) and a.value is None else self._constant_int(a)
                      for a in node.args]
            full = slice(*bounds) if _MISSING not in bounds else None
            return None if full is None else frozenset({Kind(slice, const=((full.start, full.stop, full.step),))})
        if callee is len and len(node.args) == 1 and not node.keywords:
            return self._length(self.expr(node.args[0]))
        if callee is written_through and len(node.args) == 3 and not node.keywords:
            return self._written_through([self.expr(a) for a in node.args])
        if callee is not _MISSING and library_primitive(callee):
            return self._apply_call(("call", id(callee)), callee, node)
        return None

    @staticmethod
    def _written_through(operands: list[Kinds | None]) -> Kinds | None:
        """``written_through(K, i, j)`` (``K[i][j] = v``, frontend/view_writes.py) of an array and ints: the
        index it computes, as kinds of its elements (an int per axis, or None where one is a slice); never a
        constant, since it follows the ints' values."""
        base, outer, inner = operands
        if not base or not outer or not inner or any(k.type is not np.ndarray for k in base) \
                or any(k.type is not int for k in outer | inner):
            return None
        found = set()
        for kind in base:
            try:
                index = written_through(example(kind), 0, 0)
            except Exception:
                return None
            item = kind_of(index)
            if item is None or item.items is None or any(k != Kind(int) for k in item.items):
                return None
            found.add(item)
        return frozenset(found)

    def _method(self, node: gast.Call) -> Kinds | None:
        """An array's own method (``x.sum()``, ``x.reshape(n, 1)``, a template's ``g.dot(a)``): the kinds
        of what the method returns on examples of the receiver's kinds."""
        if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        receiver = self.expr(node.func.value)
        if receiver is None or any(k.type is not np.ndarray for k in receiver):
            return None
        method, keywords = node.func.attr, [k.arg for k in node.keywords]
        operands = [receiver, *(self.expr(a) for a in node.args), *(self.expr(k.value) for k in node.keywords)]
        if not _shapes_follow(registry.method_primitive(method), operands):
            return None
        positional = 1 + len(node.args)

        def run(value, *values):
            return getattr(value, method)(*values[:positional - 1], **dict(zip(keywords, values[positional - 1:])))

        return self._apply(("method", method, tuple(keywords)), run, operands)

    @staticmethod
    def _length(kinds: Kinds | None) -> Kinds | None:
        """``len`` of an array of a known shape: its first dimension, a constant of this signature (the
        specialized adjoint runs only for arguments of these shapes), which may then give a shape."""
        if kinds is None or not kinds or any(k.type is not np.ndarray or not k.shape for k in kinds):
            return None
        lengths = {k.shape[0] for k in kinds}
        return frozenset({Kind(int, const=(lengths.pop(),))}) if len(lengths) == 1 else frozenset({Kind(int)})

    def _apply_call(self, key: tuple, fn: Callable, node: gast.Call) -> Kinds | None:
        if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        keywords = [k.arg for k in node.keywords]
        operands = [self.expr(a) for a in node.args] + [self.expr(k.value) for k in node.keywords]
        positional = len(node.args)
        if not _shapes_follow(fn, operands):
            return None

        def run(*values):
            return fn(*values[:positional], **dict(zip(keywords, values[positional:])))

        return self._apply((*key, tuple(keywords)), run, operands)

    def _apply(self, key: tuple, fn: Callable, operands: list[Kinds | None],
               constant_result: bool = False) -> Kinds | None:
        """The kinds of ``fn`` applied to every combination of the operands' kinds, by example. The result
        is a constant where every operand is one, or (``constant_result``) where it follows from the
        operands' kinds alone (an array's ``size`` or ``ndim``, a constant of this signature as ``len``'s)."""
        if any(o is None for o in operands) or math.prod(len(o) for o in operands) > MAX_COMBINATIONS:
            return None
        if any(not o for o in operands):
            return frozenset()  # an operand with no kind yet (the fixpoint will come back)
        out: set[Kind] = set()
        for combination in itertools.product(*(o if len(o) == 1 else sorted(o, key=repr) for o in operands)):
            memo = (key, combination, constant_result)
            if memo not in self._memo:
                self._memo[memo] = _evaluate(fn, combination, constant_result
                                             or all(k.const is not None for k in combination))
            found = self._memo[memo]
            if found is None:
                return None
            out.add(found)
        return frozenset(out)


def _flat(kinds: Kinds):
    """The kinds and, for lists and tuples of several kinds, their elements' kinds, all the way down."""
    for kind in kinds:
        yield kind
        if kind.items is not None:
            yield from _flat(kind.items)


def _holds_list(kind: Kind) -> bool:
    return issubclass(kind.type, list) or kind.items is not None and any(_holds_list(k) for k in kind.items) \
        or kind.item is not None and _holds_list(kind.item)


def _passed_only(adjoint: gast.FunctionDef, name: str, namespace: dict[str, Any], vjps: dict[str, Callable],
                 tape: str | None, helpers: set[str]) -> bool:
    """Every read of ``name`` passes it whole to a reader (``_reader``), one of ``helpers``, or the tape."""
    return _reads_only(adjoint, name, tape, lambda node, parent: isinstance(parent, gast.Call) and node in parent.args
                       and (_reader(parent.func, namespace, vjps)
                            or isinstance(parent.func, gast.Name) and parent.func.id in helpers))


def _reads_only(adjoint: gast.FunctionDef, name: str, tape: str | None,
                allowed: Callable[[gast.Name, gast.AST | None], bool]) -> bool:
    """Whether every read of ``name`` is an element of a tape push, the tape push itself, or ``allowed``."""
    up = parents(adjoint)
    for node in names(adjoint):
        if not (node.id == name and type(node.ctx) is gast.Load):
            continue
        parent = up.get(id(node))
        if isinstance(parent, gast.Tuple):  # an element of a tape push
            if not _tape_push(up.get(id(parent)), tape):
                return False
        elif not (_tape_push(parent, tape) or allowed(node, parent)):
            return False
    return True


def _shapes_follow(fn: Callable, operands: list[Kinds | None]) -> bool:
    """Whether the result's kind follows from the operands' kinds: an integer that is not a constant of
    the code may be a length, an axis or a count (``np.ones(n)``), unless every operand is a number
    and the function works elementwise (a ufunc, ``math``, a vjp of numbers)."""
    known = [k for o in operands if o is not None for k in _flat(o)]
    if not any(k.type is int and k.const is None for k in known):
        return True
    numbers = all(k.type in (float, int, np.float64) or k.type in (type(None), ZeroTangent) for k in known)
    elementwise = isinstance(fn, np.ufunc) or getattr(fn, "__module__", None) == "math" or own_rule_function(fn)
    return numbers and elementwise


def _typed_power(base: Kinds | None, exponent: Kinds | None) -> bool:
    """Whether ``base ** exponent``'s type follows from the kinds: a Python number to a power that is
    not an integer constant of the code may be an int or a float (2 ** -1), a float or a complex
    ((-8.0) ** 0.5)."""
    if base is None or exponent is None:
        return False
    python = any(k.type in (int, float) and k.const is None for k in base)
    return not python or all(k.const is not None and type(k.const[0]) is int for k in exponent)


def _evaluate(fn: Callable, kinds: tuple, constant_result: bool = False) -> Kind | None:
    try:
        values = [example(k) for k in kinds]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn(*values)
    except Exception:
        return None
    kind = constant(result) if type(result) is tuple or constant_result and type(result) in (int, float, bool) \
        else kind_of(result)  # a shape is a constant, and so is what constants alone give
    return None if kind is NONE else kind


def only_read(adjoint: gast.FunctionDef, sequence: str, namespace: dict[str, Any], vjps: dict[str, Callable],
              tape: str | None) -> bool:
    """Whether the adjoint only reads the list or tuple parameter ``sequence``, so that the kind of its
    elements holds throughout: it iterates over it, indexes it, takes its length, pushes it on the tape,
    or passes it to a vjp of adsrc's own rules or a NumPy function that has one (none of which changes
    it). Passed to any other function, or given another name, it might grow by an element of another kind."""
    def allowed(node: gast.Name, parent: gast.AST | None) -> bool:
        return isinstance(parent, gast.For) and parent.iter is node \
            or isinstance(parent, gast.Subscript) and parent.value is node \
            or isinstance(parent, gast.Call) and node in parent.args and _reader(parent.func, namespace, vjps)

    return _reads_only(adjoint, sequence, tape, allowed)


def _tape_push(node: gast.AST | None, tape: str | None) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "append" \
        and isinstance(node.func.value, gast.Name) and node.func.value.id == tape


def _reader(func: gast.expr, namespace: dict[str, Any], vjps: dict[str, Callable]) -> bool:
    if isinstance(func, gast.Name) and func.id in vjps:
        return own_rule_function(vjps[func.id])
    if isinstance(func, gast.Name):
        callee = namespace.get(func.id, getattr(builtins, func.id, _MISSING))
    elif isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
            and isinstance(namespace.get(func.value.id), types.ModuleType):
        callee = getattr(namespace[func.value.id], func.attr, _MISSING)
    else:
        return False
    return callee is len or callee is not _MISSING and library_primitive(callee)
