"""Receivers: which values a method call or an attribute read is made on, as far as the code shows.

``x.sum()``, ``x.T`` and ``d.get(k)`` have rules, but only as methods of an
array, a number or a dict (rules/registry.py's ``receivers``): a user's
``parser.get(w)`` or ``model.sum(x)`` is that object's own method. The front
end therefore uses the rule only where this analysis shows the receiver is
of the rule's kind; elsewhere the call is resolved when it runs (calls.py)
and an attribute read differentiates by the value it is read from
(rules/builtins.py's ``getattr``).

A kind is one of:

* ``"array"``: a NumPy array or scalar, or an array of a library that
  dispatches to NumPy (Dask, CuPy); every array method is its own;
* ``"number"``: that or a Python number (``.real``, ``.conjugate()``);
* ``"dict"``: a ``dict``;
* ``"container"``: a list, tuple, set or str (their methods have no rules).

Kinds come from what makes a value: NumPy's functions and ufuncs make
arrays; arithmetic on arrays and numbers, indexing an array, an array's
methods and attributes, a loop over an array's rows keep them; a literal or
``dict(...)`` makes a dict. A name's kind is what every assignment to it
gives (a fixpoint over the function's statements, loops included); a name
assigned anything else has none.

Parameters are assumed to be arrays, or dicts where the function calls a
dict's methods on them (``p`` in ``p.get("w")``), and the generated code
checks what a rule relied on when it is entered, before anything runs
(``x`` in ``(x * 2).sum()`` an array, ``z`` in ``z.real`` a number): a call
with anything else runs the derivative compiled without assumptions
(backend/pipeline.py's ``general``), where those calls are resolved when they
run. ``assumed`` maps each parameter a rule relied on to what it must be.
"""
from __future__ import annotations

import builtins
import numbers
from typing import Any, Callable

import gast
import numpy as np

from ..rules import registry
from ..rules.iterables import unpacked

ARRAY, NUMBER, DICT = "array", "number", "dict"
CONTAINER = "container"  # a list, tuple, set or str: no rule is a method of one (a call of one is refused)
_UNSET = "unset"  # a name's kind before the fixpoint reached any of its assignments

# Which kinds a rule's receivers accept.
ACCEPTS = {ARRAY: {ARRAY}, NUMBER: {ARRAY, NUMBER}, DICT: {DICT}}
# Array methods whose result is not an array (a Python number, a list, a view object).
_NOT_ARRAYS = {"item": NUMBER, "tolist": None}
_KEEPS_KIND = {builtins.abs}
_NUMBERS = {builtins.float, builtins.int, builtins.complex, builtins.len, builtins.round}
_CONTAINERS = {builtins.list, builtins.tuple, builtins.set, builtins.sorted, builtins.str}


def _meet(a: str | None, b: str | None) -> str | None:
    if a == _UNSET:
        return b
    if b == _UNSET or a == b:
        return a
    if {a, b} == {ARRAY, NUMBER}:
        return NUMBER
    return None


def _value_kind(value: Any) -> str | None:
    """The kind of a value the function reads from outside (a global, a closure value)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return ARRAY
    if isinstance(value, numbers.Number):
        return NUMBER
    if type(value) is dict:
        return DICT
    if type(value) in (list, tuple, set, str):
        return CONTAINER
    return None


def _is_numpy_callable(obj: Any) -> bool:
    if isinstance(obj, np.ufunc):
        return True
    module = getattr(obj, "__module__", None) or ""
    return callable(obj) and not isinstance(obj, type) and (module == "numpy" or module.startswith("numpy."))


class ReceiverKinds:
    """The kinds of a function's values where its code shows them (see the module docstring).

    ``kind(expr)`` is an expression's kind or None; ``accepts(expr, receivers)`` says whether a rule
    for ``receivers`` applies to it, and records the parameter assumptions it relied on in ``assumed``
    (a parameter's name -> its kind).
    """

    def __init__(self, node: gast.FunctionDef, resolve: Callable[[str], Any], assume: bool = True):
        self.resolve = resolve
        args = node.args
        self.params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
        starred = {a.id for a in (args.vararg, args.kwarg) if a is not None}  # a tuple and a dict
        nodes = list(_walk(node.body))
        self.assumptions = _uses(nodes, self.params) if assume else {}
        self.assumed: dict[str, str] = {}
        self.definitions: dict[str, list] = {}
        for target, value in _definitions(nodes):
            self.definitions.setdefault(target, []).append(value)
        self.locals = set(self.definitions) | self.params | starred
        self.kinds: dict[str, tuple[str | None, frozenset]] = {}
        self._solve()
        for name in starred:
            self.kinds[name] = (_meet(CONTAINER if name == getattr(args.vararg, "id", None) else DICT,
                                      self.kinds.get(name, (_UNSET,))[0]), frozenset())

    def _solve(self) -> None:
        """Kinds of names as the greatest fixpoint over their assignments (a loop's reassignment too)."""
        for p in self.params:
            kind = self.assumptions.get(p)
            self.kinds[p] = (kind, frozenset([p]) if kind else frozenset())
        for target in self.definitions:
            if target not in self.params:
                self.kinds[target] = (_UNSET, frozenset())
        for _ in range(len(self.definitions) + 2):
            changed = False
            for target, values in self.definitions.items():
                kind, deps = self.kinds[target]
                for value in values:
                    k, d = self._infer(value) if value is not None else (None, frozenset())
                    kind, deps = _meet(kind, k), deps | d
                if (kind, deps) != self.kinds[target]:
                    self.kinds[target], changed = (kind, deps), True
            if not changed:
                break
        for target, (kind, deps) in self.kinds.items():
            if kind == _UNSET:
                self.kinds[target] = (None, deps)

    def kind(self, node: gast.expr) -> str | None:
        kind = self._infer(node)[0]
        return None if kind == _UNSET else kind

    def accepts(self, node: gast.expr, receivers: str | None) -> bool:
        """Whether the rule of a method or attribute of ``receivers`` applies to ``node``'s value."""
        if receivers is None:
            return False
        kind, deps = self._infer(node)
        if kind not in ACCEPTS[receivers]:
            return False
        for p in deps:  # what the parameter must be for this rule: the entry check's kind
            need = receivers if receivers != NUMBER or self.assumptions[p] != ARRAY else NUMBER
            if self.assumed.get(p) != ARRAY:
                self.assumed[p] = need
        return True

    # -- inference ------------------------------------------------------------------------
    def _infer(self, node: gast.expr) -> tuple[str | None, frozenset]:
        none = (None, frozenset())
        if isinstance(node, gast.Constant):
            value = node.value
            if isinstance(value, str):
                return CONTAINER, frozenset()
            return (NUMBER, frozenset()) if isinstance(value, numbers.Number) else none
        if isinstance(node, gast.Name):
            if node.id in self.locals:
                return self.kinds.get(node.id, none)  # _UNSET until the fixpoint reaches it
            return _value_kind(self._outside(node)), frozenset()
        if isinstance(node, gast.BinOp):
            return self._combine([node.left, node.right])
        if isinstance(node, gast.UnaryOp):
            return none if isinstance(node.op, gast.Not) else self._infer(node.operand)
        if isinstance(node, gast.Compare):
            return self._combine([node.left, *node.comparators])
        if isinstance(node, gast.IfExp):
            (a, da), (b, db) = self._infer(node.body), self._infer(node.orelse)
            return _meet(a, b), da | db
        if isinstance(node, gast.Subscript):
            if isinstance(node.value, gast.Call) and self._outside(node.value.func) is builtins.range:
                return NUMBER, frozenset()  # the target of a loop over a range
            kind, deps = self._infer(node.value)
            return (kind, deps) if kind in (ARRAY, _UNSET) else none
        if isinstance(node, (gast.Dict, gast.DictComp)):
            return DICT, frozenset()
        if isinstance(node, (gast.List, gast.Tuple, gast.Set, gast.ListComp, gast.SetComp, gast.JoinedStr)):
            return CONTAINER, frozenset()
        if isinstance(node, gast.Attribute):
            if self._global(node):
                return _value_kind(self._outside(node)), frozenset()
            receivers = registry.receivers_of("attribute", node.attr)
            kind, deps = self._infer(node.value)
            if receivers is not None and kind == _UNSET:
                return kind, deps
            if receivers is not None and kind in ACCEPTS[receivers]:
                return kind, deps  # x.T of an array is an array, z.real of a number a number
            return none
        if isinstance(node, gast.Call):
            return self._call(node)
        return none

    def _combine(self, operands: list[gast.expr]) -> tuple[str | None, frozenset]:
        """Arithmetic and comparisons: an array if an operand is one and the rest are arrays or numbers,
        a number if all are numbers (an object with operators of its own could give anything else)."""
        kinds, deps = [], frozenset()
        for operand in operands:
            k, d = self._infer(operand)
            kinds.append(k)
            deps |= d
        if _UNSET in kinds and all(k in (ARRAY, NUMBER, _UNSET) for k in kinds):
            return _UNSET, deps  # not known yet (a loop's value): the fixpoint comes back to it
        if not kinds or any(k not in (ARRAY, NUMBER) for k in kinds):
            return None, frozenset()
        return (ARRAY if ARRAY in kinds else NUMBER), deps

    def _call(self, node: gast.Call) -> tuple[str | None, frozenset]:
        none = (None, frozenset())
        func = node.func
        if isinstance(func, gast.Attribute) and not self._global(func):
            receivers = registry.receivers_of("method", func.attr)
            kind, deps = self._infer(func.value)
            if receivers is not None and kind == _UNSET:
                return kind, deps
            if receivers is None or kind not in ACCEPTS[receivers] or receivers == DICT:
                return none
            if receivers == ARRAY and func.attr in _NOT_ARRAYS:
                result = _NOT_ARRAYS[func.attr]
                return (result, deps) if result else none
            return kind, deps
        if not isinstance(func, (gast.Name, gast.Attribute)) or isinstance(func, gast.Name) and func.id in self.locals:
            return none
        obj = self._outside(func)
        if obj is unpacked and node.args:  # a, b = value: what value's items are (desugar.py writes it so)
            return self._infer(node.args[0])
        if obj is builtins.dict:
            return DICT, frozenset()
        if obj in _NUMBERS:
            return NUMBER, frozenset()
        if obj in _CONTAINERS:
            return CONTAINER, frozenset()
        if obj in _KEEPS_KIND and len(node.args) == 1:
            return self._infer(node.args[0])
        if _is_numpy_callable(obj):
            return ARRAY, frozenset()
        return none

    def _global(self, node: gast.expr) -> bool:
        while isinstance(node, gast.Attribute):
            node = node.value
        return isinstance(node, gast.Name) and node.id not in self.locals

    def _outside(self, node: gast.expr) -> Any:
        parts = []
        while isinstance(node, gast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, gast.Name):
            return None
        try:
            obj = self.resolve(node.id)
            for attr in reversed(parts):
                obj = getattr(obj, attr)
        except Exception:
            return None
        return obj


def _uses(nodes: list, params: set[str]) -> dict[str, str]:
    """What each parameter is assumed to be: a dict where the function calls a dict's methods on it, else
    an array (nothing where it calls both an array's and a dict's); the entry check then asks only what
    a rule relied on (``ReceiverKinds.assumed``)."""
    needs: dict[str, set[str]] = {}
    for child in nodes:
        receivers = None
        if isinstance(child, gast.Call) and isinstance(child.func, gast.Attribute):
            receivers, value = registry.receivers_of("method", child.func.attr), child.func.value
        elif isinstance(child, gast.Attribute) and isinstance(child.ctx, gast.Load):
            receivers, value = registry.receivers_of("attribute", child.attr), child.value
        if receivers is not None and isinstance(value, gast.Name) and value.id in params:
            needs.setdefault(value.id, set()).add(receivers)
    kinds = {}
    for param in params:
        need = needs.get(param, set())
        if need == {DICT}:
            kinds[param] = DICT
        elif DICT not in need:
            kinds[param] = ARRAY
    return kinds


def _walk(stmts: list) -> Any:
    """Every node of ``stmts``, but not inside a nested function, lambda or class (another scope)."""
    todo = list(reversed(stmts))
    scopes = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
    while todo:  # in the order of the source, so that the fixpoint takes one round over straight code
        node = todo.pop()
        yield node
        if isinstance(node, scopes):
            continue
        children = []
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                children.extend(v for v in value if isinstance(v, gast.AST))
            elif isinstance(value, gast.AST):
                children.append(value)
        todo.extend(reversed(children))


def _names_in(target: gast.expr) -> list[str]:
    return [n.id for n in gast.walk(target) if isinstance(n, gast.Name)]


def _definitions(nodes: list) -> list[tuple[str, gast.expr | None]]:
    """``(name, value)`` for each binding of a name among ``nodes``: the value it is given, or None where
    it is not an expression the analysis reads (an unpacking, a with's target, a function definition)."""
    out: list[tuple[str, gast.expr | None]] = []
    for node in nodes:
        if isinstance(node, gast.Assign):
            for target in node.targets:
                if isinstance(target, gast.Name):
                    out.append((target.id, node.value))
                elif isinstance(target, (gast.Tuple, gast.List)) \
                        and all(isinstance(e, gast.Name) for e in target.elts):  # q, r = np.linalg.qr(a)
                    out += [(e.id, gast.Subscript(value=node.value, slice=gast.Constant(i, None), ctx=gast.Load()))
                            for i, e in enumerate(target.elts)]
                elif isinstance(target, (gast.Tuple, gast.List, gast.Starred)):
                    out += [(n, None) for n in _names_in(target)]
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            out.append((node.target.id, gast.BinOp(left=gast.Name(id=node.target.id, ctx=gast.Load(),
                                                                  annotation=None, type_comment=None),
                                                   op=node.op, right=node.value)))
        elif isinstance(node, gast.AnnAssign) and isinstance(node.target, gast.Name):
            out.append((node.target.id, node.value))
        elif isinstance(node, gast.NamedExpr):
            out.append((node.target.id, node.value))
        elif isinstance(node, (gast.For, gast.AsyncFor)):
            if isinstance(node.target, gast.Name):  # a row of an array is an array
                out.append((node.target.id, gast.Subscript(value=node.iter, slice=gast.Constant(0, None),
                                                           ctx=gast.Load())))
            else:
                out += [(n, None) for n in _names_in(node.target)]
        elif isinstance(node, (gast.With, gast.AsyncWith)):
            out += [(n, None) for item in node.items if item.optional_vars is not None
                    for n in _names_in(item.optional_vars)]
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            out.append((node.name, None))
        elif isinstance(node, (gast.Import, gast.ImportFrom)):
            out += [((a.asname or a.name).split(".")[0], None) for a in node.names]
        elif isinstance(node, gast.ExceptHandler) and node.name is not None:
            out += [(n, None) for n in _names_in(node.name)]
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            out += [(n, None) for n in node.names]
        elif isinstance(node, gast.comprehension):
            out += [(n, None) for n in _names_in(node.target)]
    return out
