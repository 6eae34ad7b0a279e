"""Aliasing: which local names may share memory, for the write checks and the in-place rewrites.

Input: a parsed function. Output: answers about its local names, computed
once per function (flow-insensitively, so they may say "shared" where a path
does not share, never the reverse):

* :meth:`Aliasing.growable_lists`: lists ``.append`` may grow (built here,
  never given a second name);
* :meth:`Aliasing.writable_arrays`: arrays ``x[i] = v`` may write (every
  value they hold is an array made here, none of them a view or a second
  name of another);
* :meth:`Aliasing.makes_fresh_list`: whether an expression makes a new
  list (lists.py says which lists ``xs[i] = v`` may write);
* :meth:`Aliasing.shared_names`: locals whose array another name may see
  (``x op= e`` on them is guarded at run time);
* :meth:`Aliasing.makes_fresh_array`: whether an expression makes a new
  array (a constructor, ``.copy()``, arithmetic).

The fence (mutations.py) refuses writes and appends outside these sets, but
for the writes freshness.py proves at the point of the write; desugar
guards augmented assignments of shared names; writes.py reads the tables of
view-making attributes, methods and functions kept here.
"""
from __future__ import annotations

import functools
import inspect
import operator
import weakref

import gast
import numpy as np

from ..ir.dataflow import names as name_nodes
from .parse import _MISSING, Parsed

# Functions that return a new array (never a view of an argument), so that an
# array made by one of them may be written with x[i] = v.
_FRESH_ARRAYS = {
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
    "array", "copy", "arange", "linspace", "eye", "identity", "tile", "concatenate", "stack",
}
_FRESH_CALLABLES = (np.zeros, np.ones, np.empty, np.full, np.array, np.copy, np.eye, np.identity)

# -- which calls may return an object another name holds ------------------------------------------
# The rule: the result of a call may be its argument itself, a view of it, or anything else an
# argument, a global or a closure reaches, unless the call is known to make a new object. Known
# to: the constructors and copies above (np.array with its default copy=True), arithmetic, ufuncs,
# a few builtins that make numbers or new lists, and the NumPy, math and SciPy functions adsrc has a
# rule for (or knows to carry no gradient), but for those below, which may return their argument
# itself (np.asarray(x) is x, np.atleast_1d(x) is x for an array, np.squeeze(x) is x when no axis has
# length 1, x.astype(float, copy=False) is x) or a view of it (x.reshape(...), np.broadcast_to,
# np.einsum('ii->i', m)). tests/test_aliases.py checks this table against every rule's samples:
# a rule whose result shares memory with an argument must be listed here.
SHARING_NAMES = frozenset({
    # the argument itself (for some arguments)
    "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "asarray_chkfinite", "require",
    "atleast_1d", "atleast_2d", "atleast_3d", "squeeze", "real", "real_if_close", "asmatrix", "matrix",
    "histogram", "histogram_bin_edges", "matrix_power", "frombuffer", "diff",
    # a view of it
    "reshape", "ravel", "transpose", "matrix_transpose", "permute_dims", "swapaxes", "moveaxis", "rollaxis",
    "expand_dims", "broadcast_to", "broadcast_arrays", "diagonal", "diag", "split", "array_split", "hsplit",
    "vsplit", "dsplit", "unstack", "flip", "fliplr", "flipud", "rot90", "einsum", "imag", "trim_zeros",
    "sliding_window_view", "as_strided", "meshgrid",
})
# Functions whose result is new or not as an argument says: name -> (the keyword, its position, whether
# its absence makes a new array, whether a constant value of it does); a value that is not a constant
# may not (np.array(x, copy=flag)). np.array(x) copies, np.array(x, copy=False) is x; np.asarray(x)
# is x, np.asarray(x, copy=True) a copy.
_COPY_KEYWORDS = {
    "array": ("copy", 2, True, lambda v: v is True), "asarray": ("copy", 4, False, lambda v: v is True),
    "nan_to_num": ("copy", 1, True, lambda v: v is True), "astype": ("copy", 4, True, lambda v: v is True),
    "diff": ("n", 1, True, lambda v: isinstance(v, int) and v != 0),  # np.diff(a, n=0) is a
}
# Methods of a value that make a new object (x.copy(), x.astype(float) with its default copy=True);
# other methods of a value are as the NumPy function adsrc differentiates them as (x.sum() is np.sum),
# and a method of neither kind may return anything (a user object's get(w) may return w).
_FRESH_METHODS = frozenset({"copy", "flatten", "tolist", "astype", "item", "__copy__", "__deepcopy__"})
_SHARING_METHODS = frozenset({"view", "conj", "conjugate", "__array__", "get", "values", "items", "keys"})
# Builtins and operators whose result is a number or a new object holding no argument.
_FRESH_BUILTINS = (len, float, int, bool, complex, abs, round, pow, divmod, sum, range, str, repr, isinstance,
                   hash, id, any, all, callable, hasattr, ord, chr, bin, hex, oct, format,
                   operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
                   operator.pow, operator.neg, operator.pos, operator.matmul, operator.abs)
_TRUSTED_MODULES = ("numpy", "math", "cmath", "scipy")


def call_shares(func: object, args: list = (), keywords: dict | None = {}, method: bool = False) -> bool:
    """Whether a call of ``func`` (a function, or for ``method`` the name of a method called on a value)
    may return an object another name holds: one of its arguments, a view of one, an item of one, a
    global. ``args`` are the positional argument nodes, ``keywords`` maps keyword names to value nodes
    (for ``copy=``), or is None where they are not known (``f(*args)``). False only where the call
    is known to make a new object (see the table above)."""
    if method:
        name = func
        if name == "astype":
            return not _copies(name, args, keywords)
        if name in _FRESH_METHODS:
            return False
        if name in _SHARING_METHODS or name.startswith("__"):
            return True
        primitive = _method_primitive(name)
        return primitive is None or call_shares(primitive, [None] + list(args), keywords)
    if func is _MISSING or func is None:
        return True
    if inspect.isfunction(func) and not _in_trusted_module(func):
        return not returns_new(func)
    if isinstance(func, np.ufunc):
        return False
    if any(func is f for f in _FRESH_BUILTINS):
        return False
    try:
        module = getattr(func, "__module__", None) or ""
        name = getattr(func, "__name__", None) or ""
    except Exception:  # noqa: BLE001  (an object whose attributes raise)
        return True
    if not isinstance(module, str) or module.split(".")[0] not in _TRUSTED_MODULES:
        return True
    if isinstance(func, type):  # np.float64(a) is a when a is a float64 array; np.matrix(a) is a view
        return True
    if name in _COPY_KEYWORDS:
        return not _copies(name, args, keywords)
    if name in SHARING_NAMES:
        return True
    if any(func is f for f in _FRESH_CALLABLES) or (module == "numpy" and name in _FRESH_ARRAYS):
        return False
    return not _has_rule(func)


def _copies(name: str, args: list, keywords: dict | None) -> bool:
    """Whether ``np.array(...)`` (or another entry of _COPY_KEYWORDS) makes a new array: the argument
    that decides is absent, or a constant that makes one."""
    if keywords is None:
        return False
    keyword, position, default, copying = _COPY_KEYWORDS[name]
    value = keywords.get(keyword)
    if value is None and len(args) > position:
        value = args[position]
    if value is None:
        return default
    return isinstance(value, gast.Constant) and copying(value.value)


def _in_trusted_module(func: object) -> bool:
    module = getattr(func, "__module__", None)
    return isinstance(module, str) and module.split(".")[0] in _TRUSTED_MODULES


# A Python function's calls make a new object where every return statement gives one (a function
# that returns its argument, an item of it or a global may not): function -> that answer.
_RETURNS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_ANALYZING: set[int] = set()


def returns_new(func: object) -> bool:
    """Whether every ``return`` of the Python function ``func`` gives a new object holding nothing
    another name holds: arithmetic, a constructor, a call known to make one, an array made in the
    function and never given a second name (``y = np.zeros(3); ...; return y``), or a display of
    such values (``return a * 2, b.copy()``). False where its source cannot be read."""
    try:
        known = _RETURNS.get(func)
    except TypeError:
        return False
    if known is not None:
        return known
    if id(func) in _ANALYZING:  # a recursive call: its answer is not known yet
        return False
    _ANALYZING.add(id(func))
    try:
        from .parse import parse_function
        aliasing = Aliasing(parse_function(func))
        owned = aliasing.writable_arrays()
        answer = all(_holds_only_new(aliasing, owned, stmt.value) for stmt in _own_nodes(aliasing.parsed.node)
                     if isinstance(stmt, gast.Return) and stmt.value is not None) and not any(
            isinstance(n, (gast.Yield, gast.YieldFrom)) for n in _own_nodes(aliasing.parsed.node))
    except Exception:  # noqa: BLE001  (no source, or code adsrc would refuse: nothing is known)
        answer = False
    finally:
        _ANALYZING.discard(id(func))
    try:
        _RETURNS[func] = answer
    except TypeError:
        pass
    return answer


def _own_nodes(node: gast.FunctionDef):
    """The nodes of a function's body, not those of the functions and lambdas defined in it."""
    stack = list(node.body)
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)):
            stack.extend(gast.iter_child_nodes(child))


def _holds_only_new(aliasing: "Aliasing", owned: set[str], value: gast.AST) -> bool:
    if isinstance(value, gast.Name):
        return value.id in owned
    if isinstance(value, (gast.Tuple, gast.List, gast.Set)):
        return all(_holds_only_new(aliasing, owned, e) for e in value.elts)
    if isinstance(value, gast.Dict):
        return all(_holds_only_new(aliasing, owned, e) for e in value.values)
    if isinstance(value, (gast.ListComp, gast.SetComp, gast.GeneratorExp)):
        return aliasing.ownership(value.elt) == "new" and not isinstance(value.elt, (gast.Tuple, gast.List))
    if isinstance(value, gast.IfExp):
        return _holds_only_new(aliasing, owned, value.body) and _holds_only_new(aliasing, owned, value.orelse)
    return aliasing.ownership(value) == "new" and not isinstance(value, gast.DictComp)


def _method_primitive(name: str) -> object:
    from ..rules import registry
    return registry.method_primitive(name)


def _has_rule(func: object) -> bool:
    from ..rules import registry
    try:
        return registry.lookup(func) is not None or registry.is_nondifferentiable(func)
    except Exception:  # noqa: BLE001
        return False


def static_value(parsed: Parsed, locals_: set[str], node: gast.AST) -> object:
    """The object a name or attribute chain refers to, if it is not a local; else _MISSING."""
    if isinstance(node, gast.Name):
        return _MISSING if node.id in locals_ else parsed.resolve(node.id)
    if isinstance(node, gast.Attribute):
        base = static_value(parsed, locals_, node.value)
        if base is _MISSING:
            return _MISSING
        try:
            return getattr(base, node.attr)
        except Exception:  # a property may raise anything
            return _MISSING
    return _MISSING


def local_names(parsed: Parsed) -> set[str]:
    """Every name the function binds: assigned, a parameter, a loop target, a local function."""
    found = {n.id for n in name_nodes(parsed.node) if not isinstance(n.ctx, gast.Load)}
    return found | {n.name for n in gast.walk(parsed.node) if isinstance(n, gast.FunctionDef)}


class Aliasing:
    """The aliasing facts of one function (each computed once)."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self._writable: set[str] | None = None
        self._shared: dict[str, bool] | None = None

    @functools.cached_property
    def locals(self) -> set[str]:
        return local_names(self.parsed)

    def static(self, node: gast.AST) -> object:
        return static_value(self.parsed, self.locals, node)

    def growable_lists(self) -> set[str]:
        """Local lists that ``.append`` may grow: built here from a list literal or a
        comprehension, and never given a second name (so no alias sees the growth)."""
        built, aliased = set(), set()
        returned = {id(d) for node in gast.walk(self.parsed.node) if isinstance(node, gast.Return)
                    for d in displays_returned(node.value)}
        for node in gast.walk(self.parsed.node):
            if isinstance(node, gast.Assign):
                target = node.targets[0]
                pairs = list(zip(target.elts, node.value.elts)) if isinstance(target, (gast.Tuple, gast.List)) \
                    and _same_length_literal(target, node.value) else [(target, node.value)]
                for part, value in pairs:  # a, b = [], []: item by item
                    names = [n.id for n in gast.walk(part) if isinstance(n, gast.Name)]
                    if isinstance(value, (gast.List, gast.ListComp)):
                        built.update(names)
                    elif isinstance(value, gast.Name):
                        aliased.add(value.id)
                        aliased.update(names)
            if isinstance(node, (gast.List, gast.Tuple, gast.Dict, gast.Set)) and id(node) not in returned \
                    and isinstance(getattr(node, "ctx", gast.Load()), gast.Load):  # a display, not a target
                elts = node.values if isinstance(node, gast.Dict) else node.elts
                aliased.update(e.id for e in elts if isinstance(e, gast.Name))
        params = {a.id for a in self.parsed.node.args.args + self.parsed.node.args.kwonlyargs
                  + self.parsed.node.args.posonlyargs}
        return built - aliased - params

    def writable_arrays(self) -> set[str]:
        """Local arrays that ``x[i] = v`` may write: every value they hold is a fresh array
        made here (a constructor, ``.copy()`` or arithmetic), never a view of another array,
        and they are never given a second name. adsrc runs the write on a copy."""
        if self._writable is not None:
            return self._writable
        fresh, other = set(), set()
        for node in gast.walk(self.parsed.node):
            if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
                target = node.targets[0].id
                (fresh if self.makes_fresh_array(node.value) else other).add(target)
                if isinstance(node.value, gast.Name):
                    other.add(node.value.id)
            elif isinstance(node, gast.Assign):
                for n in gast.walk(node.targets[0]):
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                        other.add(n.id)
            if isinstance(node, (gast.List, gast.Tuple, gast.Dict, gast.Set)) and isinstance(
                    getattr(node, "ctx", gast.Load()), gast.Load):
                elts = node.values if isinstance(node, gast.Dict) else node.elts
                other.update(e.id for e in elts if isinstance(e, gast.Name))
            if isinstance(node, gast.For):
                other.update(n.id for n in gast.walk(node.target) if isinstance(n, gast.Name))
        params = {a.id for a in self.parsed.node.args.args + self.parsed.node.args.kwonlyargs
                  + self.parsed.node.args.posonlyargs}
        self._writable = fresh - other - params
        return self._writable

    def makes_fresh_list(self, value: gast.AST) -> bool:
        """Whether an expression makes a new list: a display, a comprehension, ``[...] * n``, ``list(...)``,
        ``sorted(...)``, or ``+`` of two of them."""
        if isinstance(value, (gast.List, gast.ListComp)):
            return True
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult):  # [v] * n (not [v] * an_array)
            left, right = value.left, value.right
            return isinstance(left, (gast.List, gast.ListComp)) and self._a_count(right) \
                or isinstance(right, (gast.List, gast.ListComp)) and self._a_count(left)
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add):
            return self.makes_fresh_list(value.left) and self.makes_fresh_list(value.right)
        if isinstance(value, gast.Call) and not any(isinstance(a, gast.Starred) for a in value.args):
            target = self.static(value.func)
            return target is list or target is sorted
        return False

    def _a_count(self, value: gast.AST) -> bool:
        """Whether an expression looks like a number of items: a constant, a name, ``len(...)``, ``int(...)``,
        or arithmetic of them (a NumPy call would make ``[v] * n`` an array)."""
        if isinstance(value, (gast.Constant, gast.Name, gast.Attribute)):
            return True
        if isinstance(value, gast.BinOp):
            return self._a_count(value.left) and self._a_count(value.right)
        if isinstance(value, gast.UnaryOp):
            return self._a_count(value.operand)
        return isinstance(value, gast.Call) and any(self.static(value.func) is f for f in (len, int, max, min))

    def makes_fresh_array(self, value: gast.AST) -> bool:
        """Whether an expression makes a new array no other name holds: arithmetic, a constructor,
        ``.copy()``, ``np.array(x)`` (with its default ``copy=True``; ``np.array(x, copy=False)``
        is ``x``)."""
        if isinstance(value, (gast.BinOp, gast.UnaryOp)):
            return not self.makes_fresh_list(value)
        if isinstance(value, gast.Call):
            func = value.func
            if isinstance(func, gast.Attribute) and func.attr == "copy" and not value.args:
                return True
            target = self.static(func)
            if target is _MISSING:  # a method of a value: those of an array that copy it
                return isinstance(func, gast.Attribute) and func.attr in ("astype", "flatten") \
                    and self.static(func.value) is _MISSING and not self.call_shares(value)
            # A constructor, or a NumPy (SciPy, math) function known to make a new array (np.fft.fft(x),
            # np.exp(x), np.dot(a, b)), but not a function of the program's (which may return a list,
            # whose writes lists.py decides).
            return not self._user_call(value) and not self.call_shares(value)
        return False

    def call_shares(self, call: gast.Call) -> bool:
        """Whether the call's result may be an object another name holds (its argument itself, a view
        of it, an item, a global): :func:`call_shares` of its callee, resolved statically; a method
        of a local value by its name; a callee only known when it runs may return anything."""
        args = list(call.args)
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        if any(isinstance(a, gast.Starred) for a in args) or any(k.arg is None for k in call.keywords):
            keywords = None  # f(*a, **k): which argument is which is known only when it runs
        func = call.func
        target = self.static(func)
        if target is _MISSING and isinstance(func, gast.Attribute) and self.static(func.value) is _MISSING:
            return call_shares(func.attr, args, keywords, method=True)
        return call_shares(target, args, keywords)

    def _returns_one_array(self, call: gast.Call) -> bool:
        """A NumPy function (or an array's method) that returns one array, which may share its argument's
        memory (``np.reshape(W, -1)``, ``x.T``): an index of it is a new view. Not one that returns a list
        or tuple (``np.split``, ``np.broadcast_arrays``, ``np.atleast_1d(a, b)``), whose items may be the
        arguments themselves."""
        func = call.func
        target = self.static(func)
        if target is _MISSING:
            return isinstance(func, gast.Attribute) and self.static(func.value) is _MISSING \
                and func.attr in _VIEW_METHODS
        name = getattr(target, "__name__", "")
        return _in_trusted_module(target) and not isinstance(target, type) and name not in _CONTAINER_RESULTS \
            and not (name.startswith("atleast_") and len(call.args) != 1)

    def _user_call(self, call: gast.Call) -> bool:
        """A call of a Python function of the program's own (whose result may be a tuple of what it
        was given)."""
        target = self.static(call.func)
        return inspect.isfunction(target) and not _in_trusted_module(target)

    def ownership(self, value: gast.AST) -> str:
        """How the object an expression evaluates to relates to the objects other names hold:
        ``"new"`` (a new object: a number, arithmetic, a display, a call known to make one),
        ``"view"`` (a new array, which may be a view of another: an index of a new array, whose
        ``.base`` then says so), or ``"shared"`` (it may be an object another name holds: a name,
        an attribute, an item, or the result of any call not known to make a new object, such as
        ``np.asarray(x)``, which is ``x``)."""
        if isinstance(value, (gast.Name, gast.Attribute, gast.NamedExpr, gast.BoolOp, gast.Await, gast.Yield,
                              gast.YieldFrom, gast.Starred)):
            return "shared"
        if isinstance(value, gast.Subscript):
            inner = value.value
            if isinstance(inner, (gast.BinOp, gast.UnaryOp)) or (
                    isinstance(inner, gast.Call) and not self.call_shares(inner) and not self._user_call(inner)) \
                    or (isinstance(inner, gast.Call) and self._returns_one_array(inner)):
                return "view"  # an item or slice of an array: a new view of it (then .base says so), or a number
            return "shared"  # an item of a container (a tuple a function returned) is the item itself
        if isinstance(value, gast.Call):
            return "shared" if self.call_shares(value) else "new"
        if isinstance(value, gast.IfExp):
            kinds = {self.ownership(value.body), self.ownership(value.orelse)}
            return "shared" if "shared" in kinds else "view" if "view" in kinds else "new"
        return "new"

    def sources(self, value: gast.AST) -> dict[str, str]:
        """The local names whose objects (or memory) the value of an expression may share, each with how:
        ``"view"`` where every step is one that only an array takes (``y[0]``, ``y.T``, ``y.reshape(...)``,
        ``np.asarray(y)``, ``np.array(y, copy=False)``: a view of ``y``, or ``y`` itself), ``"held"`` where a
        step may keep the object itself whatever it is (``y``, ``(y, 1)``, ``[y for _ in r]``, ``f(y)``,
        ``y if c else z``). None for arithmetic and calls known to make a new object (``np.sum(y)``,
        ``y.copy()``, ``len(y)``)."""
        found = self._sources(value)
        return {k: "held" if how == "same" else how for k, how in found.items()}

    def _sources(self, value: gast.AST) -> dict[str, str]:
        if isinstance(value, gast.Name):
            return {value.id: "same"} if value.id in self.locals else {}
        if isinstance(value, gast.Attribute):
            from ..rules.registry import INERT_ATTRIBUTES
            if value.attr in INERT_ATTRIBUTES:
                return {}
            return _step("view" if value.attr in _VIEW_ATTRIBUTES else "held", self._sources(value.value))
        if isinstance(value, gast.Subscript):  # an item of an array is a view of it (of a list, the item)
            return _step("view", self._sources(value.value))
        if isinstance(value, (gast.Starred, gast.NamedExpr)):
            return _step("held", self._sources(value.value))
        if isinstance(value, gast.Call):
            if not self.call_shares(value):
                return {}
            func, parts = value.func, list(value.args) + [k.value for k in value.keywords]
            target = self.static(func)
            found: dict[str, str] = {}
            if target is _MISSING and isinstance(func, gast.Attribute) and self.static(func.value) is _MISSING:
                # a method of a value: an array's view method gives a view of it (y.reshape(...))
                array_method = func.attr in _VIEW_METHODS or (
                    not func.attr.startswith("__") and func.attr not in _SHARING_METHODS - _VIEW_METHODS
                    and _method_primitive(func.attr) is not None and _in_trusted_module(_method_primitive(func.attr)))
                _merge(found, _step("view" if array_method else "held", self._sources(func.value)))
            else:
                _merge(found, _step("held", self._sources(func)))
            array_function = target is not _MISSING and _in_trusted_module(target) and not isinstance(target, type)
            for part in parts:  # np.asarray(y) is y or a view of it; what a function of the program's returns, anything
                _merge(found, _step("view" if array_function else "held", self._sources(part)))
            return found
        parts: list[gast.AST] = []
        if isinstance(value, gast.IfExp):
            parts = [value.body, value.orelse]
        elif isinstance(value, gast.BoolOp):
            parts = list(value.values)
        elif isinstance(value, (gast.Tuple, gast.List, gast.Set)):
            parts = list(value.elts)
        elif isinstance(value, gast.Dict):
            parts = [e for e in list(value.values) + list(value.keys) if e is not None]
        elif isinstance(value, (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)):
            parts = [value.key, value.value] if isinstance(value, gast.DictComp) else [value.elt]
            parts += [g.iter for g in value.generators]
            bound = {n.id for g in value.generators for n in gast.walk(g.target) if isinstance(n, gast.Name)}
            found = {}
            for part in parts:
                _merge(found, _step("held", self._sources(part)))
            return {k: how for k, how in found.items() if k not in bound}
        found = {}
        for part in parts:
            _merge(found, _step("held", self._sources(part)))
        return found

    @functools.cached_property
    def reach(self) -> dict[str, dict[str, set[str]]]:
        """For each local, the other locals whose objects (or memory) its value may share, transitively, each
        with how (:meth:`sources`): ``{"view"}`` where only array views lead there, ``"held"`` where some
        step may keep the object itself. Flow-insensitive, from every binding in the function: assignments
        (``a, b = e, f`` item by item; ``a, b = b, a`` permutes what its names hold), ``xs[i] = y`` and
        ``xs.append(y)`` (``xs`` holds ``y``), ``xs += [y]``, and loop targets (rows or items of the
        iterable)."""
        pairs: list[tuple[str, dict[str, str]]] = []
        swapped: list[set[str]] = []
        for child in gast.walk(self.parsed.node):
            if isinstance(child, gast.Assign) and isinstance(child.targets[0], (gast.Tuple, gast.List)) \
                    and _same_length_literal(child.targets[0], child.value):
                if _permutes(child.targets[0], child.value):
                    swapped.append(_names(child.targets[0]))
                else:  # a, b = e, f: item by item
                    for t, v in zip(child.targets[0].elts, child.value.elts):
                        pairs += [(n, self.sources(v)) for n in _names(t)]
                continue
            if isinstance(child, (gast.Assign, gast.AnnAssign)) and child.value is not None:
                target = child.targets[0] if isinstance(child, gast.Assign) else child.target
                found = self.sources(child.value)
                root = target
                while isinstance(root, (gast.Subscript, gast.Attribute)):  # xs[i] = y: xs holds y
                    root = root.value
                if root is not target and isinstance(root, gast.Name):
                    pairs.append((root.id, _step("held", found)))
                elif isinstance(target, gast.Name):
                    pairs.append((target.id, found))
                else:  # a, b = e: items (or rows) of e
                    pairs += [(n, _step("view", found)) for n in _names(target)]
            elif isinstance(child, gast.AugAssign) and isinstance(child.target, gast.Name):
                pairs.append((child.target.id, _step("held", self.sources(child.value))))  # xs += [y]
            elif isinstance(child, gast.For):  # rows of an array (views), items of a list (held)
                pairs += [(n, _step("view", self.sources(child.iter))) for n in _names(child.target)]
            elif isinstance(child, gast.Expr) and isinstance(child.value, gast.Call) \
                    and isinstance(child.value.func, gast.Attribute) and child.value.func.attr in _GROWING \
                    and isinstance(child.value.func.value, gast.Name):  # xs.append(y): xs holds y
                call, found = child.value, {}
                for part in list(call.args) + [k.value for k in call.keywords]:
                    _merge(found, _step("held", self.sources(part)))
                pairs.append((call.func.value.id, found))
        direct: dict[str, dict[str, set[str]]] = {}
        for name, found in pairs:
            for base, how in found.items():
                if base != name:
                    direct.setdefault(name, {}).setdefault(base, set()).add(how)
        changed = True
        while changed:
            changed = False
            for group in swapped:  # a name that shares one of a permuted group's objects may share any of them
                for name, bases in list(direct.items()):
                    for base in [b for b in bases if b in group]:
                        for other in group - {name}:
                            if not bases[base] <= bases.setdefault(other, set()):
                                bases[other] |= bases[base]
                                changed = True
                    if name in group:
                        for other in group - {name}:
                            into = direct.setdefault(other, {})
                            for base, hows in bases.items():
                                if base != other and not hows <= into.setdefault(base, set()):
                                    into[base] |= hows
                                    changed = True
            for name, bases in list(direct.items()):  # transitively: a held step anywhere makes it held
                for middle, hows in list(bases.items()):
                    for base, further in list(direct.get(middle, {}).items()):
                        if base == name:
                            continue
                        combined = {"view"} if hows == {"view"} and further == {"view"} else \
                            ({"held"} | ({"view"} if "view" in hows and "view" in further else set()))
                        if not combined <= bases.setdefault(base, set()):
                            bases[base] |= combined
                            changed = True
        return direct

    def shared_names(self) -> dict[str, bool]:
        """Locals whose array may also be reachable through another name: given a second
        name (``v = x``, ``v = G``), an item or attribute of another object (``row = W[0]``,
        ``a, b = pair``, ``for row in m``, ``for v in vs``), a parameter (its caller holds the
        argument too), or taken as a view of another array (``x.T``, ``x.reshape(...)``).
        For them ``x += e`` in place and ``x = x + e`` differ when they hold an array (the
        other name sees the change), so desugar guards their augmented assignments at run
        time. Maps each to whether it may be shared whatever the array (else only when the
        array is a view). The counter of ``range`` or ``enumerate`` is never an array."""
        if self._shared is not None:
            return self._shared
        aliased: set[str] = set()
        views: set[str] = set()
        swapped: list[set[str]] = []

        def bind(target: gast.AST, value: gast.AST) -> None:
            owner = self.ownership(value)
            shares = owner == "shared"
            if isinstance(target, gast.Name):
                if shares:
                    # the object itself, an item of it, or what a call returned (which may be its argument:
                    # np.asarray(x) is x), which another name may hold
                    aliased.add(target.id)
                    if isinstance(value, gast.Name) and value.id in self.locals:
                        aliased.add(value.id)
                elif owner == "view":
                    views.add(target.id)
            elif isinstance(target, (gast.Tuple, gast.List)):
                if _same_length_literal(target, value):
                    if _permutes(target, value):  # a, b = b, a: each array keeps one name,
                        swapped.append(_names(target))  # and what shares it shares it still
                    else:
                        for t, v in zip(target.elts, value.elts):
                            bind(t, v)
                    return
                # items of what is unpacked: of a list or tuple that holds them, rows of an array
                (aliased if shares else views).update(_names(target))

        for node in gast.walk(self.parsed.node):
            if isinstance(node, gast.Assign):
                bind(node.targets[0], node.value)
            elif isinstance(node, gast.AnnAssign) and node.value is not None:
                bind(node.target, node.value)
            elif isinstance(node, gast.For):
                target, iterable = node.target, node.iter
                if isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Name) and iterable.args:
                    builtin = self.static(iterable.func)
                    if builtin is range:
                        continue
                    if builtin is enumerate and isinstance(target, gast.Tuple) and len(target.elts) == 2:
                        target, iterable = target.elts[1], iterable.args[0]  # the counter is an int
                if isinstance(iterable, (gast.List, gast.Tuple)) \
                        and not any(isinstance(e, gast.Starred) for e in iterable.elts):
                    for item in iterable.elts:  # for v in [a, b]: v is a, then b
                        bind(target, item)
                else:  # the items the iterable holds, or rows of an array (views of it)
                    aliased.update(_names(target))
            elif isinstance(node, gast.FunctionDef):  # the function's, or a local function's
                aliased.update(a.id for a in node.args.args)
        changed = True
        while changed:
            changed = False
            for group in swapped:
                for kind in (aliased, views):
                    if kind & group and not group <= kind:
                        kind.update(group)
                        changed = True
        # Another name may hold this one's object itself (t = (y, 1), v = f(y), xs.append(y), v = y): were
        # it an array, Python's y op= e would change what that name holds. (Views of y, which only an
        # array has, are refused before running where they are read after the update: writes.py.)
        aliased.update(base for bases in self.reach.values() for base, hows in bases.items() if "held" in hows)
        self._shared = {name: name in aliased for name in aliased | views}
        return self._shared

# Attributes and methods of an array that give a view of it (or the array itself: x.real of a real x).
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag", "base", "flat"})
_VIEW_METHODS = frozenset({"reshape", "transpose", "ravel", "squeeze", "swapaxes", "view", "diagonal", "conj",
                           "conjugate", "astype", "__array__"})
# Sharing NumPy functions whose result is a list or tuple of arrays (an item may be an argument itself).
_CONTAINER_RESULTS = frozenset({"split", "array_split", "hsplit", "vsplit", "dsplit", "unstack", "broadcast_arrays",
                                "histogram", "meshgrid"})
# Methods that put their argument into the object they are called on.
_GROWING = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})


def _step(how: str, found: dict[str, str]) -> dict[str, str]:
    """Sources one step further: ``how`` the step shares ("view" or "held") after what ``found`` says."""
    return {k: how if was == "same" else ("view" if was == "view" and how == "view" else "held")
            for k, was in found.items()}


def _merge(into: dict[str, str], found: dict[str, str]) -> None:
    for k, how in found.items():
        into[k] = how if k not in into or into[k] == how else "held"


def _names(target: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}


def _same_length_literal(target: gast.AST, value: gast.AST) -> bool:
    """True if ``target = value`` unpacks a tuple or list display item by item."""
    return isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts) \
        and not any(isinstance(e, gast.Starred) for e in value.elts)


def _permutes(target: gast.AST, value: gast.AST) -> bool:
    """True for ``a, b = b, a``: names rebound to one another's objects, which no other name gets."""
    names = [e.id for e in target.elts if isinstance(e, gast.Name)]
    values = [e.id for e in value.elts if isinstance(e, gast.Name)]
    return len(names) == len(values) == len(target.elts) == len(set(names)) and sorted(names) == sorted(values)


def displays_returned(value: gast.AST | None) -> list[gast.AST]:
    """The tuple (or list) displays a ``return`` statement returns, nested ones too (``return (xs, n), ys``):
    a list in one is returned, as a copy, when the function ends, so nothing after sees it grow."""
    if not isinstance(value, (gast.Tuple, gast.List)):
        return []
    return [value] + [d for e in value.elts for d in displays_returned(e)]
