"""Calls whose callee is known only when the code runs: ``f(y)`` for a parameter ``f``, ``self.predict(X)``.

A call of a function named outside the differentiated function
(``helper(x)``) is resolved when it compiles. These are not: the callee is a
value (a function passed as an argument, held in a list, a method of an
object, a ``functools.partial``, a callable instance), so generated code
hands the call to a :class:`CallDerivative`, which resolves it at each call:

* a registered primitive (``np.tanh`` passed as ``f``) runs with its rule;
* a Python function runs its own compiled adjoint (or JVP);
* a bound method runs its function's, with the object as first argument;
* a callable instance runs ``type(obj).__call__``'s, with ``obj`` first;
* a ``functools.partial`` runs its function's, its stored arguments first;
* a derivative made by ``adsrc.grad`` (called inside a differentiated function)
  gives its own: a Hessian-vector product in reverse mode.

The object a method or ``__call__`` is bound to is differentiable: its
cotangent is the callee's own (``self.predict``'s cotangent is ``self``'s).
``*xs`` and ``**kw`` arguments are expanded here, and their cotangents come
back as a tuple and a dict.
"""
from __future__ import annotations

import functools
import inspect
import sys
import types
import weakref
from typing import Any, Callable

from .backend.pipeline import FORWARD, Mode, compile
from .errors import BEYOND_A_CALL, NoGradientRule, RefusedWhenRun, UnsupportedSyntax
from .frontend.parse import in_library, signature_of
from .rules.checkpoint import recomputes, unwrap
from .rules.closures import captures, lifted_from
from .rules import registry
from .values import TangentDict, TangentTuple, add_tangents, part, unthunk, zero
from .values.arrays import receives
from .values.pytrees import holds_floats, attribute_cotangent, attribute_tangent, is_namedtuple

_SELF = "self"  # where a bound object's value comes from: the callee itself (its cotangent is the callee's)


class _Many(tuple):
    """The sources of a ``*args`` parameter's items."""


class _Captured:
    """The source of a value a called closure captured (rules/closures.py): part ``index`` of the
    callee's own cotangent, a tuple of ``count``."""

    __slots__ = ("index", "count")

    def __init__(self, index: int, count: int):
        self.index, self.count = index, count


class CallDerivative:
    """The adjoint (or JVP) of one call site whose callee is a value.

    Reverse: ``derivative(first, *atoms, **keywords) -> (value, pullback)``,
    ``pullback(d_value)`` returning the cotangents of ``wrt``. Forward:
    ``derivative(tangents, first, *atoms, **keywords) -> (value, tangent)``,
    ``tangents`` those of ``wrt``. ``first`` is the callee, or the object whose
    attribute ``method`` is called; ``wrt`` holds positions in
    ``(first, *atoms)`` and names of keywords; ``starred`` and ``mapping`` are
    the positions of ``*xs`` and ``**kw`` atoms; ``where`` is the call site.
    """

    __slots__ = ("wrt", "mode", "method", "starred", "mapping", "where", "source", "after")

    def __init__(self, wrt: tuple, mode: Mode, where: str, method: str | None = None, starred: tuple = (),
                 mapping: tuple = (), source: str | None = None, after: bool = False):
        self.wrt, self.mode, self.where, self.method = wrt, mode, where, method
        self.starred, self.mapping, self.source, self.after = starred, mapping, source, after

    def __repr__(self) -> str:
        kind = "jvp" if self.mode.forward else "adjoint"
        what = f"method {self.method!r}" if self.method else "call"
        return f"<{kind} of the {what} at {self.where}, wrt={self.wrt}>"

    # -- resolving ------------------------------------------------------------------------
    def plan(self, first: Any, atoms: tuple, keywords: dict) -> "_Plan":
        if self.after:  # super(C, first).method(...): C is the last atom, not an argument
            *atoms, klass = atoms
            callee = getattr(super(klass, first), self.method)
        else:
            callee = getattr(first, self.method) if self.method else first
        plan = _Plan(self.where, self.source)
        if self.method and not self.after:  # an array's or a dict's own method, with its rule (x.sum())
            prim = registry.method_primitive(self.method)
            if prim is not None and receives(registry.receivers_of("method", self.method), first) \
                    and getattr(callee, "__self__", None) is first and not inspect.isfunction(
                        getattr(type(first), self.method, None)):
                plan.positional.append((first, (0, None)))
                first_is_atom = True
            else:
                first_is_atom = False
        else:
            first_is_atom = False
        for index, atom in enumerate(atoms, start=1):
            if index in self.starred:
                for j, value in enumerate(atom):
                    plan.positional.append((value, (index, j)))
            elif index in self.mapping:
                for key, value in atom.items():
                    plan.keywords[key] = (value, (index, key))
            else:
                plan.positional.append((atom, (index, None)))
        for key, value in keywords.items():
            plan.keywords[key] = (value, (key, None))
        if first_is_atom:
            plan.method_rule(prim, callee)
            return plan
        plan.resolve(callee)
        if plan.derivative is not None and not plan.lifted and self.active(_SELF):
            if getattr(plan.derivative, "order", 1) >= 2 and captures(getattr(callee, "root", None)) is not None:
                raise RefusedWhenRun(f"differentiating {plan.label} with respect to the values its local function "
                                     f"captures: that is a third derivative; {BEYOND_A_CALL}",
                                     self.where, "pass those values to it as arguments (the direction of an hvp "
                                     "is differentiable), or define the function outside")
            raise RefusedWhenRun(f"differentiating {plan.label} with respect to what the function it differentiates "
                                 f"holds (an object's attributes, a partial's arguments)", self.where,
                                 "give those values to the derivative as arguments, as in "
                                 "adsrc.grad(Model.loss, wrt=(0, 1))(model, x)")
        if plan.holds and self.active(_SELF):
            raise RefusedWhenRun(f"differentiating with respect to {plan.holds} ({plan.label})", self.where,
                                 "pass those values to the function as arguments, or hold the object they "
                                 "belong to and call its method")
        if plan.lifted and self.method and self.active(_SELF):
            raise RefusedWhenRun(f"calling the local function {plan.label} read from an attribute, when its captured "
                                 f"values are differentiable", self.where, "pass the function itself as an argument")
        return plan

    def active(self, source: Any) -> bool:
        if source == _SELF or isinstance(source, _Captured):
            return 0 in self.wrt
        return source is not None and source[0] in self.wrt

    # -- reverse ---------------------------------------------------------------------------
    def __call__(self, *args: Any, **keywords: Any) -> tuple[Any, Any]:
        if self.mode.forward:
            tangents, first, *atoms = args
            return self.tangent(tangents, first, tuple(atoms), keywords)
        first, *atoms = args
        plan = self.plan(first, tuple(atoms), keywords)
        values, sources = plan.values(), plan.sources()
        if plan.rule is not None:
            return self.rule_adjoint(plan, first, tuple(atoms), values, sources)
        if plan.replaces:
            return self.replace_adjoint(plan, first, atoms)
        wrt = tuple(i for i, s in enumerate(sources) if any(self.active(x) for x in flat_sources(s)))
        if plan.derivative is not None:
            if plan.keywords:
                raise RefusedWhenRun(f"passing keyword arguments to {plan.label}", self.where, "pass them positionally")
            value, pullback = plan.derivative.__adsrc_pullback__(tuple(values), wrt, self.mode.eager)
        else:
            value, pullback = self.compiled(plan, wrt, self.mode).function(*values)

        def call_pullback(g: Any) -> tuple:
            grads = pullback(g)
            return self.gather(first, atoms, [(sources[i], d) for i, d in zip(wrt, grads)])

        return value, call_pullback

    def replace_adjoint(self, plan: "_Plan", first: Any, atoms: tuple) -> tuple[Any, Any]:
        """``p._replace(w=v)`` of a NamedTuple: a new tuple, ``v`` at ``w``'s position, ``p``'s elsewhere."""
        (old, source), = plan.positional
        fields = type(old)._fields
        value = old._replace(**plan.constant_keywords())

        def replace_pullback(g: Any) -> tuple:
            if g is zero:
                return self.gather(first, atoms, [])
            given = {fields.index(k) for k in plan.keywords}
            parts = [(source, TangentTuple(zero if i in given else part(g, i) for i in range(len(fields))))]
            parts += [(s, part(g, fields.index(k))) for k, (_, s) in plan.keywords.items()]
            return self.gather(first, atoms, parts)

        return value, replace_pullback

    def rule_adjoint(self, plan: "_Plan", first: Any, atoms: tuple, values: list,
                     sources: list) -> tuple[Any, Any]:
        if any(self.active(s) for s in plan.keyword_sources()):
            raise RefusedWhenRun(f"passing a differentiable keyword argument to {plan.label}", self.where,
                                 "pass it positionally")
        ans = plan.rule_function(*values, **plan.constant_keywords())
        active = [i for i, s in enumerate(sources) if self.active(s)]
        for i in active:
            if i >= len(plan.rule.vjps) or plan.rule.vjps[i] is None:
                raise RefusedWhenRun(f"differentiating {plan.label} with respect to its argument {i}, which its "
                                     f"rule does not differentiate", self.where)

        def rule_pullback(g: Any) -> tuple:
            parts = [(sources[i], unthunk(plan.rule.vjps[i](g, ans, *values, **plan.constant_keywords())))
                     for i in active]
            return self.gather(first, atoms, parts)  # atoms: the lengths of the *xs spread into the call

        return ans, rule_pullback

    def gather(self, first: Any, atoms: Any, parts: list) -> tuple:
        """The cotangents of ``wrt`` from those of the resolved call's parameters."""
        out: dict[Any, Any] = {}
        for source, d in parts:
            for leaf_source, leaf in _routes(source, d):
                if isinstance(leaf_source, _Captured):
                    key, d_leaf = 0, TangentTuple(leaf if i == leaf_source.index else zero
                                                  for i in range(leaf_source.count))
                elif leaf_source == _SELF:
                    key, d_leaf = 0, leaf
                    if self.method:
                        d_leaf = attribute_cotangent(leaf, first, self.method)
                elif leaf_source[1] is None:
                    key, d_leaf = leaf_source[0], leaf
                elif isinstance(leaf_source[1], int):
                    key = leaf_source[0]
                    tangent = [zero] * len(atoms[key - 1])
                    tangent[leaf_source[1]] = leaf
                    d_leaf = TangentTuple(tangent)
                else:
                    key, d_leaf = leaf_source[0], TangentDict({leaf_source[1]: leaf})
                out[key] = add_tangents(out.get(key, zero), d_leaf)
        return tuple(out.get(w, zero) for w in self.wrt)

    # -- forward ---------------------------------------------------------------------------
    def tangent(self, tangents: tuple, first: Any, atoms: tuple, keywords: dict) -> tuple[Any, Any]:
        plan = self.plan(first, atoms, keywords)
        values = plan.values()
        param_tangents = self.parameter_tangents(plan, first, dict(zip(self.wrt, tangents)))
        if plan.derivative is not None:
            return plan.derivative.__adsrc_pushforward__(tuple(values), tuple(param_tangents))
        if plan.replaces:
            old, fields = values[0], type(values[0])._fields
            keyword_tangents = dict(zip(plan.keywords, param_tangents[1:]))
            t_old = param_tangents[0]
            return old._replace(**plan.constant_keywords()), TangentTuple(
                keyword_tangents[f] if f in keyword_tangents else part(t_old, i) for i, f in enumerate(fields))
        if plan.rule is not None:
            ans = plan.rule_function(*values, **plan.constant_keywords())
            total = zero
            for i, t in enumerate(param_tangents):
                if t is zero:
                    continue
                jvp = plan.rule.jvps[i] if i < len(plan.rule.jvps) else None
                if jvp is None:
                    raise RefusedWhenRun(f"forward mode through {plan.label} with respect to its argument {i}",
                                         self.where)
                total = add_tangents(total, jvp(t, ans, *values, **plan.constant_keywords()))
            return ans, total
        wrt = tuple(i for i, t in enumerate(param_tangents) if t is not zero)
        return self.compiled(plan, wrt, FORWARD).function(*values, *(param_tangents[i] for i in wrt))

    def compiled(self, plan: "_Plan", wrt: tuple[int, ...], mode: Mode) -> Any:
        """The resolved function's derivative. It compiles when the call first runs, after the caller's earlier
        statements ran: a construct it refuses is therefore refused then (``RefusedWhenRun``)."""
        try:
            return compile(plan.function, wrt, mode, plan.lifted)
        except RefusedWhenRun:
            raise
        except UnsupportedSyntax as error:
            raise RefusedWhenRun(f"calling {plan.label}, a function passed as a value, whose code adsrc refuses "
                                 f"({error})", self.where, "call it by its name, so that adsrc checks it before "
                                 "anything runs, or change what it refuses") from None


    def parameter_tangents(self, plan: "_Plan", first: Any, given: dict) -> list:
        """The tangents of the resolved call's parameters, from those of the call site's atoms
        (``given``: by position in ``(first, *atoms)`` and by keyword name)."""

        def tangent_of(source: Any) -> Any:
            if isinstance(source, _Captured):
                t = given.get(0, zero)
                return t if t is zero else part(t, source.index)
            if source == _SELF:
                t = given.get(0, zero)
                return attribute_tangent(t, first, self.method) if self.method and t is not zero else t
            if isinstance(source, _Many):  # a *args parameter
                return TangentTuple(tangent_of(s) for s in source)
            if isinstance(source, dict):
                return TangentDict({k: tangent_of(s) for k, s in source.items()})
            if source is None or source[0] not in given:
                return zero
            t = given[source[0]]
            return t if source[1] is None or t is zero else part(t, source[1])

        return [tangent_of(s) for s in plan.sources()]


def flat_sources(source: Any) -> list:
    if isinstance(source, dict):
        return list(source.values())
    return list(source) if isinstance(source, _Many) else [source]


def _routes(source: Any, d: Any) -> list[tuple[Any, Any]]:
    """Split a parameter's cotangent by where its value came from (``*args`` and ``**kwargs`` params)."""
    if isinstance(source, (dict, _Many)):
        d = unthunk(d)  # a lazy adjoint's cotangent of a *args or **kwargs parameter may be a thunk
    if isinstance(source, dict):
        return [(s, part(d, k)) for k, s in source.items() if s is not None]
    if isinstance(source, _Many):
        return [(s, part(d, j)) for j, s in enumerate(source) if s is not None]
    return [] if source is None else [(source, d)]


# The methods a frozen scipy.stats distribution runs as ``self.dist.<name>(*given, *self.args, **self.kwds)``
_FROZEN_METHODS = frozenset({"pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "pmf", "logpmf",
                             "mean", "var", "std", "median", "entropy"})


def _frozen_distribution_method(callee: Any) -> bool:
    """``norm(0.0, 2.0).logpdf``, a bound method of SciPy's rv_frozen (known by its shape: no SciPy import)."""
    frozen = callee.__self__
    return getattr(callee, "__name__", "") in _FROZEN_METHODS \
        and type(frozen).__name__ in ("rv_continuous_frozen", "rv_discrete_frozen", "rv_frozen") \
        and all(hasattr(frozen, a) for a in ("dist", "args", "kwds"))


def _module_distribution(dist: Any) -> Any:
    """scipy.stats' own instance of ``dist``'s distribution (``scipy.stats.norm``), which rules are registered
    on: a frozen distribution holds a copy made with the same constructor parameters."""
    stats = sys.modules.get("scipy.stats")
    named = getattr(stats, getattr(dist, "name", ""), None) if stats is not None else None
    return named if type(named) is type(dist) else dist


class _Plan:
    """A resolved call: the Python function (or rule) it runs, and where each parameter's value came from."""

    def __init__(self, where: str, source: str | None = None):
        self.where, self.source = where, source
        self.positional: list[tuple[Any, Any]] = []  # (value, source)
        self.keywords: dict[str, tuple[Any, Any]] = {}
        self.function: Callable | None = None
        self.rule: registry.Rule | None = None
        self.rule_function: Callable | None = None
        self.derivative: Any = None  # an object that knows its own derivatives (adsrc.grad(g))
        self.replaces = False  # a NamedTuple's _replace: structural, done here
        self.label = ""
        self.bound: list[tuple[Any, Any]] = []  # the parameters' (value, source), in order
        self.lifted = False  # a local function, compiled with its captured values as leading parameters
        self.holds = ""  # what the callee holds that its cotangent cannot reach (a partial's float arguments)

    def resolve(self, callee: Any) -> None:
        owner = _SELF  # the source of the first object bound: the callee's own cotangent; any later one is constant
        for _ in range(16):
            rule = registry.lookup(callee) if _hashable(callee) else None
            if rule is not None:
                self.rule, self.rule_function = rule, callee
                self.label = getattr(callee, "__name__", repr(callee))
                self.bound = self.positional
                return
            if self.positional and is_namedtuple(self.positional[0][0]) \
                    and callee is getattr(type(self.positional[0][0]), "_replace", None):  # p._replace(w=v)
                self.replaces, self.label = True, "_replace"
                self.bound = self.positional + list(self.keywords.values())
                return
            if hasattr(type(callee), "__adsrc_pullback__"):  # a derivative made by adsrc.grad, called inside
                self.derivative, self.label = callee, repr(callee)
                self.bound = self.positional
                captured = captures(getattr(callee, "root", None))
                if captured is not None and owner == _SELF and hasattr(type(callee), "__adsrc_lifted__"):
                    # grad(g) of a local function g: g's captured values come first
                    self.derivative, self.lifted = callee.__adsrc_lifted__(), True
                    self.bound = [(v, _Captured(i, len(captured))) for i, v in enumerate(captured)] + self.bound
                return
            if recomputes(callee) and unwrap(callee) is not callee:  # adsrc.checkpoint(f) called as a value:
                callee = unwrap(callee)  # differentiated as f, whose tape is then kept (not recomputed)
                continue
            # a user's function, or a local one lifted (rules/closures.py: compiled as that function, lifted)
            if inspect.isfunction(callee) and (not in_library(callee) or lifted_from(callee) is not None):
                self.function, self.label = callee, callee.__qualname__
                self.bind(callee)
                captured = captures(callee)
                if captured is not None:  # a local function: its captured values come first (compiled lifted)
                    self.lifted = True
                    self.bound[0:0] = [(v, _Captured(i, len(captured)) if owner == _SELF else None)
                                       for i, v in enumerate(captured)]
                return
            if isinstance(callee, types.MethodType) and _frozen_distribution_method(callee):
                # a frozen scipy.stats distribution's method: the distribution's, with the frozen parameters
                # after the call's own arguments, as rv_frozen passes them (dist.logpdf(x, *args, **kwds))
                frozen = callee.__self__
                if owner == _SELF and holds_floats((frozen.args, frozen.kwds)):
                    self.holds = "a frozen scipy.stats distribution's parameters"
                self.positional.extend((a, None) for a in frozen.args)
                for key, value in frozen.kwds.items():
                    self.keywords.setdefault(key, (value, None))
                callee = getattr(_module_distribution(frozen.dist), callee.__name__)
            elif isinstance(callee, types.MethodType):  # a classmethod's class is a constant
                self.positional.insert(0, (callee.__self__, None if inspect.isclass(callee.__self__) else owner))
                callee = callee.__func__
            elif isinstance(callee, functools.partial):
                if owner == _SELF and holds_floats((callee.args, callee.keywords)):
                    self.holds = "a functools.partial over values with gradients"
                self.positional[0:0] = [(a, None) for a in callee.args]
                for key, value in callee.keywords.items():
                    self.keywords.setdefault(key, (value, None))
                callee = callee.func
            elif not inspect.isroutine(callee) and not inspect.isclass(callee) \
                    and inspect.isfunction(getattr(type(callee), "__call__", None)):
                self.positional.insert(0, (callee, owner))
                callee = type(callee).__call__
            else:
                break
            owner = None
        if self.source is not None:  # a callee made by an expression: bind it once, at module level
            raise NoGradientRule(self.source, self.where)
        label = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None) or repr(callee)
        raise NoGradientRule(label, self.where, "@adsrc.register_adjoint on the function it calls (it has no "
                                                "Python source adsrc can read), or pass a Python function")

    def method_rule(self, prim: Any, bound: Callable) -> None:
        """``x.name(...)`` of an array (or dict): its rule, ``prim``'s, with ``x`` as its first argument; the
        value is the method's own (``x.reshape(2, 3)``: np.reshape would take 3 for an order)."""
        self.rule = registry.lookup(prim)
        self.rule_function = lambda receiver, *args, **keywords: bound(*args, **keywords)
        self.label = f".{getattr(bound, '__name__', prim.__name__)}()"
        self.bound = self.positional

    def bind(self, func: Callable) -> None:
        """Bind the call's arguments to ``func``'s parameters, as Python would, keeping their sources."""
        signature, simple = _signature(func)
        if simple == len(self.positional) and not self.keywords:  # the common call: every parameter, in order
            self.bound = list(self.positional)
            return
        arguments = self.positional + list(self.keywords.values())
        tokens = [_Token(i) for i in range(len(arguments))]
        names = list(self.keywords)
        try:
            bound = signature.bind(*tokens[:len(self.positional)],
                                   **dict(zip(names, tokens[len(self.positional):])))
        except TypeError as error:
            raise TypeError(f"{func.__qualname__}() {error}") from None
        bound.apply_defaults()

        def resolved(item: Any) -> tuple[Any, Any]:
            return arguments[item.index] if isinstance(item, _Token) else (item, None)  # a default

        for param in signature.parameters.values():
            item = bound.arguments[param.name]
            if param.kind is param.VAR_POSITIONAL:
                pairs = [resolved(t) for t in item]
                self.bound.append((tuple(v for v, _ in pairs), _Many(s for _, s in pairs)))
            elif param.kind is param.VAR_KEYWORD:
                pairs = {k: resolved(t) for k, t in item.items()}
                self.bound.append(({k: v for k, (v, _) in pairs.items()}, {k: s for k, (_, s) in pairs.items()}))
            else:
                self.bound.append(resolved(item))

    def values(self) -> list:
        return [v for v, _ in self.bound]

    def sources(self) -> list:
        return [s for _, s in self.bound]

    def keyword_sources(self) -> list:
        return [s for _, s in self.keywords.values()]

    def constant_keywords(self) -> dict:
        return {k: v for k, (v, _) in self.keywords.items()}


_signatures: "weakref.WeakKeyDictionary[Callable, tuple]" = weakref.WeakKeyDictionary()


def _signature(func: Callable) -> tuple[inspect.Signature, int]:
    """``func``'s signature, and its number of parameters if all are plain positional ones (else -1);
    cached while its code and defaults stay the objects they were."""
    key = (func.__code__, func.__defaults__, func.__kwdefaults__)
    entry = _signatures.get(func)
    if entry is not None and all(a is b for a, b in zip(entry[0], key)):
        return entry[1], entry[2]
    signature = signature_of(func)
    params = signature.parameters.values()
    simple = len(params) if all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params) else -1
    _signatures[func] = (key, signature, simple)
    return signature, simple


class _Token:
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def adjoint_of_call(wrt: tuple, eager: bool, where: str, method: str | None = None, starred: tuple = (),
                    mapping: tuple = (), source: str | None = None, after: bool = False) -> CallDerivative:
    """The adjoint of a call whose callee is a value (see :class:`CallDerivative`)."""
    return CallDerivative(wrt, Mode("reverse", eager), where, method, starred, mapping, source, after)


def jvp_of_call(wrt: tuple, where: str, method: str | None = None, starred: tuple = (),
                mapping: tuple = (), source: str | None = None, after: bool = False) -> CallDerivative:
    """The JVP of a call whose callee is a value (see :class:`CallDerivative`)."""
    return CallDerivative(wrt, FORWARD, where, method, starred, mapping, source, after)
