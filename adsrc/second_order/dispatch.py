"""The run-time half of forward mode for any Python code (second order): what a call means.

Code transformed by transform.py does not resolve its calls at compile time;
it hands each one to :func:`call` with the tangents of the arguments, which
returns ``(value, tangent)``. That is what lets the same pass differentiate a
generated adjoint, the pullback closures it returns and the rule functions
they call. In order:

* a function already in the JVP convention (a transformed pullback) is called as is;
* a callee adjoint (``adjoint_of``) runs the JVP of its *eager* adjoint: at the
  inner level of a second derivative, gradients are accumulated eagerly, never
  as thunks;
* ``checkpoint_loop``'s adjoint runs the JVP of the loop's adjoint without
  checkpoints (``recompute.stored_loop_adjoint``; a checkpointed function's
  is a callee adjoint like any other): second order saves no memory;
* a vjp of a rule marked ``piecewise_linear`` (its value depends on the primal
  arguments only through shapes or piecewise-constant masks) is linear in the
  cotangent, so its tangent is the vjp of the cotangent's tangent; any other
  vjp is differentiated from its source;
* a registered primitive uses its jvps; a non-differentiable one gives zero;
* when every tangent is zero the primal is called as it is (the common case
  for index and shape arithmetic);
* any other Python function is transformed from its source, once, unless it
  comes from a library (frontend/libraries.py), which is a primitive;
* anything else (a C function without a rule, a function whose source cannot
  be transformed) is called as it is, and gets a zero tangent when its result
  holds no floating-point values or all its inputs' tangents are zero; if
  not, the call raises, naming the function: a tangent is never silently
  dropped.

The helpers for operators, loops, unpacking and writes into arrays are in
helpers.py; this module re-exports them, so that generated code imports
one module (as ``fwd``).
"""
from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable

import numpy as np

from ..errors import NotDifferentiable
from ..values.arrays import is_number, receives
from ..rules import registry
from .helpers import (  # noqa: F401  (generated code reaches every helper through this module)
    TangentDict, TangentList, TangentTuple, arg_tangent, attribute, binary, carries_nothing, holds_floats,
    is_zero_tree, items,
    iterate, keyword_tangents, kwarg_tangents, opaque_value, own, own_list, ownership, star, store, subscript,
    unary, unpack, unpack_starred, vararg_tangents, zero, _all_zero,
)
from ..backend.pipeline import EAGER, GeneralDerivative, compile
from ..frontend.prims import positional_parameters
from ..frontend.libraries import is_library_function
from ..rules import _util, linalg, writes
from ..rules._tangent import dense
from ..rules.iterables import dict_with
from ..calls import CallDerivative, flat_sources
from ..recompute import LoopAdjoint, stored_loop_adjoint
from ..runtime import CalleeDerivative
from ..values import add_tangents, arrays, as_tangent, drop_last, part, unthunk
from .compile import general_jvp
from ..errors import BEYOND_A_CALL
from .gradient import unit_seed

_LIST_MUTATORS = {"append", "extend", "insert", "pop", "reverse", "clear"}


# ---- calls -------------------------------------------------------------------------
def jvp_function(fn: Callable, level: int = 1) -> Callable:
    """Mark a transformed function: it takes ``(tangents, ktangents, *args)``, the tangents of ``level``
    (see :func:`call_at`), and returns (value, tangent)."""
    fn.__adsrc_jvp__ = level
    return fn


def call(fn: Any, tangents: tuple, ktangents: dict, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """``fn(*args, **kwargs)`` and its tangent, given the arguments' tangents."""
    return call_at(1, fn, tangents, ktangents, *args, **kwargs)


def call_at(level: int, fn: Any, tangents: tuple, ktangents: dict, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """:func:`call` with tangents of ``level``. Code generated here at one level is real Python, and is
    differentiated again at another (a third derivative is the JVP of a second-order JVP): a function
    transformed at ``level`` is called as it is, one transformed at a level below is transformed once
    more, at this one, and so is this dispatcher when code at a level above calls it. There, this logic runs
    on that code's values, where a function the code defined is bound to its form at that level: one
    marked above ``level`` stands for the function it was transformed from."""
    if type(fn) in _BUILTIN_CALLABLES and all(carries_nothing(t) for t in (*tangents, *ktangents.values())):
        return fn(*args, **kwargs), zero  # the common case in transformed code: isinstance, len, getattr
    if getattr(fn, "__adsrc_jvp__", 0) >= level:  # above: this dispatcher's own logic, transformed (see above)
        return fn(tangents, ktangents, *args, **kwargs)
    if fn is _call_site or fn is _derivative_site:  # a call site's adjoint, differentiated at two levels
        raise NotDifferentiable(f"differentiating the call at {args[1].where} (a call of a value: a derivative, "
                                f"or a callee resolved when it runs) at two levels of forward mode: "
                                f"{BEYOND_A_CALL}")
    if fn in _LIST_METHODS and isinstance(args[_LIST_METHODS[fn]], list) \
            and args[_LIST_METHODS[fn] + 2] in _LIST_MUTATORS:
        return _mirrored(_LIST_METHODS[fn], tangents, args, kwargs)
    if isinstance(fn, CalleeDerivative) and not fn.mode.forward:
        return _transformed(level, compile(fn.func, fn.wrt, EAGER).function, tangents, ktangents, args, kwargs)
    if isinstance(fn, GeneralDerivative) and not fn.mode.forward:  # arguments an entry check turned away
        return _transformed(level, compile(fn.func(), fn.wrt, EAGER, fn.lifted, general=True).function, tangents,
                            ktangents, args, kwargs)
    if isinstance(fn, CallDerivative) and not fn.mode.forward:
        return _call_site(level, fn, tangents, ktangents, args, kwargs)
    if isinstance(fn, LoopAdjoint):  # checkpoint_loop's: the plain loop adjoint, every pullback kept
        return _transformed(level, stored_loop_adjoint, (zero, *tangents), ktangents, (fn.wrt, *args), kwargs)
    rule = _vjp_rule(fn)
    if rule is not None:
        return _vjp_call(level, rule, fn, tangents, ktangents, args, kwargs)
    rule = _vjp_rule(fn, "jvps")
    if rule is not None:  # a rule's jvp, called from generated forward code (a jvp of a jvp)
        return _jvp_call(level, rule, fn, tangents, ktangents, args, kwargs)
    if getattr(fn, "__adsrc_multilinear__", None) is not None:
        return _multilinear_call(level, fn, tangents, ktangents, args, kwargs)
    if inspect.isclass(fn) and (issubclass(fn, tuple) and hasattr(fn, "_fields") or dataclasses.is_dataclass(fn)):
        return _construct(fn, tangents, ktangents, args, kwargs)
    if fn is dict and kwargs and len(args) <= 1:  # dict(pairs, b=x): keywords are entries, as in dict_with
        pairs, dpairs = (args[0], tangents[0]) if args else ((), zero)
        return _rule_call(registry.lookup(dict_with), dict_with, (dpairs, TangentDict(ktangents)), {},
                          (pairs, kwargs), {})
    special = _special(fn) or _in_place(fn)
    if special is not None:
        return special(tangents, args, kwargs)
    # Generated code, and this dispatcher called by code transformed again, are transformed even with zero
    # tangents: a function that code defines is bound to its transformed form there, and would be called in
    # the wrong convention by the plain dispatcher.
    if not _own_code(fn) and all(carries_nothing(t) for t in (*tangents, *ktangents.values())):
        return fn(*args, **kwargs), zero
    rule = registry.lookup(fn)
    if rule is not None:
        return _rule_call(rule, fn, tangents, ktangents, args, kwargs)
    if registry.is_nondifferentiable(fn) or fn in _pure_helpers():
        return fn(*args, **kwargs), zero
    if inspect.isfunction(fn):
        if is_library_function(fn):  # libraries are primitives: never transformed from their source
            return _opaque(fn, tangents, ktangents, args, kwargs, _LIBRARY)
        return _transformed(level, fn, tangents, ktangents, args, kwargs)
    return _opaque(fn, tangents, ktangents, args, kwargs)


def _own_code(fn: Any) -> bool:
    """Code generated here or this dispatcher's (and gradient.py's): never run as is with tangents of the
    level above, and never opaque."""
    return inspect.isfunction(fn) and (fn.__code__.co_filename.startswith(_GENERATED) or fn in _DISPATCHERS
                                       or fn.__code__.co_filename in _THIS_LAYER)


_DISPATCHERS = (call, call_at)  # and method, method_at: added below
_GENERATED = "<adsrc"
_THIS_LAYER = (__file__, unit_seed.__code__.co_filename)  # this module, gradient.py
_BUILTIN_CALLABLES = (type(len), type(object.__init__), type)  # C functions, slot wrappers, classes


_LIBRARY = ("it comes from a library and has no tangent rule (adsrc does not differentiate a library's "
            "source); give it one with adsrc.rules.registry.defjvp")


def _call_site(level: int, fn: CallDerivative, tangents: tuple, ktangents: dict, args: tuple, kwargs: dict) -> tuple[Any, Any]:
    """The JVP of a call site's adjoint (a callee known when it runs): the JVP of the resolved function's
    eager adjoint, its pullback's cotangents regrouped as the call site's (a linear map, so their
    tangents are regrouped the same way)."""
    first, *atoms = args
    plan = fn.plan(first, tuple(atoms), kwargs)
    if plan.derivative is not None and getattr(plan.derivative, "order", None) is None:  # adsrc.vmap(g)
        raise NotDifferentiable(f"a second derivative through {plan.label}, called at {fn.where}: adsrc "
                                f"differentiates a call of it once (grad, vjp, jvp), not twice")
    given = {**dict(enumerate(tangents)), **ktangents}
    if plan.derivative is not None:  # a gradient called inside: its pullback is a second derivative already
        return _derivative_site(level, fn, plan, first, tuple(atoms), given)
    if plan.rule is not None:
        return _rule_site(level, fn, plan, first, tuple(atoms), given)
    param_tangents = fn.parameter_tangents(plan, first, given)
    sources = plan.sources()
    wrt = tuple(i for i, s in enumerate(sources) if any(fn.active(x) for x in flat_sources(s)))
    pair, dpair = _transformed(level, compile(plan.function, wrt, EAGER, plan.lifted).function,
                               tuple(param_tangents), {}, tuple(plan.values()), {})
    value, inner = pair

    def pullback(tangents: tuple, ktangents: dict, g: Any) -> tuple[Any, Any]:
        grads, dgrads = call_at(level, inner, tangents, ktangents, g)
        parts = [sources[i] for i in wrt]
        return (fn.gather(first, atoms, list(zip(parts, grads))),
                fn.gather(first, atoms, [(s, zero if carries_nothing(dgrads) else part(dgrads, k))
                                         for k, s in enumerate(parts)]))

    return (value, jvp_function(pullback, level)), (part(dpair, 0), zero)


def _derivative_site(level: int, fn: CallDerivative, plan: Any, first: Any, atoms: tuple,
                     given: dict) -> tuple[Any, Any]:
    """The JVP of a call site's adjoint that resolved to a derivative (``adsrc.grad(f)(x)`` in a function
    differentiated twice): the derivative's own (its ``__adsrc_pullback_tangent__``), one order up."""
    hook = getattr(plan.derivative, "__adsrc_pullback_tangent__", None)
    if hook is None or level > 1:
        raise NotDifferentiable(f"differentiating {plan.label}, called at {fn.where}, twice more: {BEYOND_A_CALL}")
    if plan.keywords:
        raise NotDifferentiable(f"passing keyword arguments to {plan.label} at {fn.where}: pass them positionally")
    sources = plan.sources()
    wrt = tuple(i for i, s in enumerate(sources) if any(fn.active(x) for x in flat_sources(s)))
    (value, back), (tangent, back_tangent) = hook(tuple(plan.values()),
                                                  tuple(fn.parameter_tangents(plan, first, given)), wrt)
    parts = [sources[i] for i in wrt]

    def pullback(tangents: tuple, ktangents: dict, g: Any) -> tuple[Any, Any]:
        grads, dgrads = back_tangent(g, tangents[0] if tangents else zero)
        return fn.gather(first, atoms, list(zip(parts, grads))), fn.gather(first, atoms, list(zip(parts, dgrads)))

    return (value, jvp_function(pullback, level)), (tangent, zero)


def _rule_site(level: int, fn: CallDerivative, plan: Any, first: Any, atoms: tuple, given: dict) -> tuple[Any, Any]:
    """The JVP of a call site's adjoint that resolved to a rule (``g = np.sum; g(x)``): the value's tangent by
    the rule's jvps; the pullback's by differentiating each vjp it calls, as any vjp called from adjoint code."""
    if not all(is_zero_tree(given.get(key, zero)) for key in plan.keywords):
        raise NotDifferentiable(f"second order through {plan.label} with a differentiable keyword argument at "
                                  f"{fn.where}; pass it positionally")
    values, sources, kwargs = plan.values(), plan.sources(), plan.constant_keywords()
    dvalues = fn.parameter_tangents(plan, first, given)
    value, _ = fn.rule_adjoint(plan, first, atoms, values, sources)  # its refusals: a keyword or argument without a vjp
    dvalue = _rule_tangent(plan.rule, dvalues, value, values, kwargs)
    active = [i for i, s in enumerate(sources) if fn.active(s)]

    def pullback(tangents: tuple, ktangents: dict, g: Any) -> tuple[Any, Any]:
        dg = tangents[0] if tangents else zero
        parts, dparts = [], []
        for i in active:
            d, dd = call_at(level, plan.rule.vjps[i], (dg, dvalue, *dvalues), {}, g, value, *values, **kwargs)
            parts.append((sources[i], unthunk(d)))
            dparts.append((sources[i], dd))
        return fn.gather(first, atoms, parts), fn.gather(first, atoms, dparts)

    return (value, jvp_function(pullback, level)), (dvalue, zero)


def _construct(cls: type, tangents: tuple, ktangents: dict, args: tuple, kwargs: dict) -> tuple[Any, Any]:
    """A NamedTuple or dataclass built from values with tangents: a tangent of its fields (a tuple for a
    NamedTuple, a dict by field for a dataclass, as the first-order pass builds its cotangent)."""
    value = cls(*args, **kwargs)
    if _all_zero(tangents, ktangents):
        return value, zero
    namedtuple = issubclass(cls, tuple)
    if not namedtuple and (hasattr(cls, "__post_init__") or not cls.__dataclass_params__.init):
        raise NotDifferentiable(f"forward mode through the construction of {cls.__name__}, whose __post_init__ "
                                  f"may change what its fields hold")
    bound = inspect.signature(cls).bind(*range(len(args)), **{k: k for k in kwargs})
    fields = list(cls._fields) if namedtuple else [f.name for f in dataclasses.fields(cls) if f.init]
    per_field = []
    for name in fields:
        source = bound.arguments.get(name)
        if source is None:
            per_field.append(zero)  # a default
        else:
            per_field.append(tangents[source] if isinstance(source, int) else ktangents.get(source, zero))
    if namedtuple:
        return value, TangentTuple(per_field)
    return value, TangentDict(dict(zip(fields, per_field)))


def _transformed(level: int, fn: Callable, tangents: tuple, ktangents: dict, args: tuple,
                 kwargs: dict) -> tuple[Any, Any]:
    jvp, failure = general_jvp(fn, level)
    if jvp is None and _own_code(fn):  # it writes into tangents: run as it is, it would drop their tangents
        raise NotDifferentiable(f"adsrc cannot differentiate its own {fn.__qualname__} again: {failure}")
    if jvp is None:
        return _opaque(fn, tangents, ktangents, args, kwargs, failure)
    return jvp(tangents, ktangents, *args, **kwargs)


def _opaque(fn, tangents, ktangents, args, kwargs, reason: Exception | str | None = None) -> tuple[Any, Any]:
    value = fn(*args, **kwargs)
    if _all_zero(tangents, ktangents) or not (holds_floats(value) or _may_have_written(value, args, tangents)):
        return value, zero
    label = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    why = f": {reason}" if reason is not None else ": it has no tangent rule and no Python source adsrc can transform"
    raise NotDifferentiable(f"adsrc cannot differentiate {label} in forward mode{why}")


def _may_have_written(value: Any, args: tuple, tangents: tuple) -> bool:
    """A procedure (it returns None) given an array or list whose tangent is not zero may have written into it."""
    return value is None and any(isinstance(a, (np.ndarray, list, dict)) and not is_zero_tree(t)
                                 for a, t in zip(args, tangents))


def _rule_call(rule, fn, tangents, ktangents, args, kwargs, bound: bool = False) -> tuple[Any, Any]:
    """``fn(*args, **kwargs)`` and its tangent by ``rule``'s jvps; ``bound``: ``fn`` is the method of
    ``args[0]`` that the rule's primitive differentiates, called without it."""
    ans = _method_value(rule, args[0], fn.__name__, *args[1:], **kwargs) if bound else fn(*args, **kwargs)
    if not all(is_zero_tree(t) for t in ktangents.values()):
        if bound:
            raise NotDifferentiable(f"forward mode through {rule.name} with a differentiable keyword argument")
        tangents, args, kwargs = _keywords_by_position(rule, fn, tangents, ktangents, args, kwargs)
    return ans, _rule_tangent(rule, tangents, ans, args, kwargs)


def _method_value(rule, obj: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """``obj.name(*args)``, the method ``rule`` differentiates, with ``obj`` an argument: differentiated
    again (a special below), its tangent is the rule's, where a bound method would hide ``obj``'s."""
    return getattr(obj, name)(*args, **kwargs)


def _method_value_tangent(tangents, args, kwargs) -> tuple[Any, Any]:
    rule, obj, name, *rest = args
    value = getattr(obj, name)(*rest, **kwargs)
    tangents = tuple(tangents) + (zero,) * (len(args) - len(tangents))
    return value, _rule_tangent(rule, (tangents[1], *tangents[3:]), value, (obj, *rest), kwargs)


def _rule_tangent(rule, tangents, ans, args, kwargs) -> Any:
    """The tangent of ``ans``, the rule's value at ``args``: the sum of its jvps."""
    total = zero
    for i, t in enumerate(tangents):
        if is_zero_tree(t):  # a list of zeros carries no tangent into a rule
            continue
        jvp = rule.jvps[i] if i < len(rule.jvps) else None
        if jvp is None:
            if i < len(rule.vjps) and rule.vjps[i] is not None:
                raise NotDifferentiable(f"{rule.qualname} has no tangent rule for argument {i}")
            continue  # an index, a shape, a condition: no tangent
        total = add_tangents(total, jvp(t, ans, *args, **kwargs))
    return total


def _keywords_by_position(rule, fn, tangents, ktangents, args, kwargs) -> tuple[tuple, tuple, dict]:
    """A rule differentiates positional arguments: bind each keyword that carries a tangent to its
    parameter's position (``norm.pdf(x, loc=mu)`` -> ``(x, mu)``), the positions before it filled with the
    keywords that name them or the parameters' defaults, as the first-order transform does."""
    params = positional_parameters(fn)
    varied = [k for k, t in ktangents.items() if not is_zero_tree(t)]
    position = {p.name: i for i, p in enumerate(params or ()) if p.kind is p.POSITIONAL_OR_KEYWORD}
    if params is None or any(k not in position or position[k] < len(args) for k in varied):
        raise NotDifferentiable(f"forward mode through {rule.name} with a differentiable keyword argument "
                                  f"({', '.join(varied)}) that has no position of its own: pass it positionally")
    last = max(position[k] for k in varied)
    args, kwargs, tangents = list(args), dict(kwargs), list(tangents) + [zero] * (last + 1 - len(tangents))
    for i in range(len(args), last + 1):
        param = params[i]
        if param.name in kwargs:
            args.append(kwargs.pop(param.name))
            tangents[i] = ktangents.get(param.name, zero)
            continue
        default = None if param.default is np._NoValue else param.default  # NumPy's "not given"
        if default is param.empty:
            raise NotDifferentiable(f"forward mode through {rule.name}: the argument {param.name!r} before a "
                                      f"differentiable keyword argument has no default")
        args.append(default)
    return tuple(tangents), tuple(args), kwargs


def _vjp_call(level, rule, vjp, tangents, ktangents, args, kwargs) -> tuple[Any, Any]:
    """A rule's vjp called from adjoint code: linear in the cotangent ``g`` (its first argument)."""
    if args and args[0] is zero:
        return zero, zero
    if rule.piecewise_linear or _all_zero(tangents[1:], ktangents):
        value = vjp(*args, **kwargs)  # the wrapper's complex checks run here
        dg = tangents[0] if tangents else zero
        return value, (zero if is_zero_tree(dg) or value is zero else vjp(dg, *args[1:], **kwargs))
    if not rule.complex_ok and registry.meets_complex(args[1:]):  # the wrapper is bypassed below
        raise registry.complex_error(f"the gradient rule {vjp.__name__}", "met")
    own = getattr(vjp.__wrapped__, "__adsrc_tangent__", None)
    if own is not None and level == 1:  # a vjp that is a derivative itself, with its own tangent (nested_jvp)
        value, tangent = own(tangents, args, kwargs)
        return as_tangent(value), as_tangent(tangent)
    _refuse_once_more(vjp, args)
    value, tangent = _transformed(level, vjp.__wrapped__, tangents, ktangents, args, kwargs)
    return as_tangent(value), as_tangent(tangent)


def _jvp_call(level, rule, jvp, tangents, ktangents, args, kwargs) -> tuple[Any, Any]:
    """A rule's jvp called from forward code: linear in the tangent ``t`` (its first argument), so its
    tangent is the jvp of ``t``'s tangent plus, unless the rule is linear, its source's derivative."""
    if args and args[0] is zero:
        return zero, zero
    if rule.piecewise_linear or _all_zero(tangents[1:], ktangents):
        value = jvp(*args, **kwargs)
        dt = tangents[0] if tangents else zero
        return value, (zero if is_zero_tree(dt) or value is zero else jvp(dt, *args[1:], **kwargs))
    if not rule.complex_ok and (registry.meets_complex(args) or registry.meets_complex((None, *tangents))):
        raise registry.complex_error(f"the tangent rule {jvp.__name__}", "met")
    _refuse_once_more(jvp, args)
    inner = jvp.__wrapped__
    if getattr(inner, "__adsrc_multilinear__", None) is not None:
        value, tangent = _multilinear_call(level, inner, tangents, ktangents, args, kwargs)
    else:
        value, tangent = _transformed(level, inner, tangents, ktangents, args, kwargs)
    ans = args[1] if len(args) > 1 else None
    if type(ans) is np.ndarray:  # the wrapper broadcasts a contribution to the result's shape: so its tangent
        value = value if value is zero or np.shape(value) == ans.shape else np.broadcast_to(value, ans.shape)
        tangent = tangent if carries_nothing(tangent) or np.shape(tangent) == ans.shape \
            else np.broadcast_to(tangent, ans.shape)
    return as_tangent(value), as_tangent(tangent)


def _multilinear_call(level, jvp, tangents, ktangents, args, kwargs) -> tuple[Any, Any]:
    """``jvp(t, ans, *args)`` of a multilinear primitive is the primitive's call with ``t`` in place of
    argument ``index`` (rules/_tangent.py): its tangent is that call's, the tangent of ``t`` in that place."""
    func, index, fixed = jvp.__adsrc_multilinear__
    t, dt = (args[0], tangents[0]) if tangents else (args[0], zero)
    values, moved = list(args[2:]), list(tangents[2:]) + [zero] * (len(args) - 2 - len(tangents[2:]))
    values[index], moved[index] = dense(t, values[index]), dt
    return call_at(level, func, tuple(moved), ktangents, *values, **{**kwargs, **fixed} if fixed else kwargs)


def _refuse_once_more(rule_function: Callable, args: tuple) -> None:
    """A rule function that is a derivative itself (jvp's, called inside a differentiated function)
    raises its own error, made from its arguments, rather than being differentiated again from its source."""
    refusal = getattr(rule_function.__wrapped__, "__adsrc_refuse_again__", None)
    if refusal is not None:
        raise refusal(*args)


_rule_index: dict[tuple[str, int], Any] = {}
_indexed_at = [-1]  # the registry's version the index was built at


def _vjp_rule(fn: Any, kind: str = "vjps"):
    """The rule whose vjp (``kind="jvps"``: jvp) ``fn`` is, if it is one."""
    if not hasattr(fn, "__wrapped__") or kind == "vjps" and not hasattr(fn, "uses"):
        return None
    if _indexed_at[0] != registry.version():  # the rules hold their functions, so an id stays theirs till then
        _rule_index.clear()
        for r in registry.rules():
            for k in ("vjps", "jvps"):
                _rule_index.update({(k, id(v)): r for v in getattr(r, k) if v is not None})
        _indexed_at[0] = registry.version()
    rule = _rule_index.get((kind, id(fn)))
    return rule if rule is not None and any(v is fn for v in getattr(rule, kind)) else None


# ---- functions with tangents of their own: runtime helpers and container builtins ------
def _linear_helper(func: Callable, tangent: Callable) -> Callable:
    def run(tangents, args, kwargs):
        value = func(*args, **kwargs)
        t = tangents[0] if tangents else zero
        return value, (zero if carries_nothing(t) else tangent(t, *args[1:], **kwargs))

    return run


def _sequence(kind: type, tangent_kind: type) -> Callable:
    growable = issubclass(kind, list)  # a list may grow in place, in a function it is passed to: its tangent too

    def run(tangents, args, kwargs):
        if not args:
            return kind(), (tangent_kind() if growable else zero)
        value = kind(args[0])
        t = tangents[0] if tangents else zero
        return value, (zero if carries_nothing(t) and not growable else tangent_kind(items(t, value)))

    return run


def _mapping(tangents, args, kwargs):
    """``TangentDict(d)`` (a dict's tangent, built by code differentiated again): its entries' tangents too."""
    value = TangentDict(*args, **kwargs)
    t = tangents[0] if tangents else zero
    return value, TangentDict({} if carries_nothing(t) else t)


def _zip(tangents, args, kwargs):
    value = list(zip(*args, **kwargs))
    columns = [items(t, list(a))[: len(value)] for t, a in zip(tangents, args)]
    return value, TangentList(TangentTuple(row) for row in zip(*columns))


def _enumerate(tangents, args, kwargs):
    seq = list(args[0])
    value = list(enumerate(seq, *args[1:], **kwargs))
    return value, TangentList(TangentTuple((zero, t)) for t in items(tangents[0], seq))


def _reversed(tangents, args, kwargs):
    seq = list(args[0])
    return seq[::-1], TangentList(items(tangents[0], seq)[::-1])


def _selected_argument(tangents, args, kwargs):
    """``arg_tangent(tangents, ktangents, index, name)`` in code differentiated again, and its tangent."""
    ts, kts, index, name = args
    t_ts, t_kts = (tuple(tangents) + (zero, zero))[:2]
    if index < len(ts):
        return ts[index], items(t_ts, ts)[index]
    return kts.get(name, zero), (t_kts.get(name, zero) if isinstance(t_kts, dict) else zero)


def _selected_varargs(tangents, args, kwargs):
    ts, start = args
    t_ts = tangents[0] if tangents else zero
    return vararg_tangents(ts, start), TangentTuple(items(t_ts, ts)[start:])


def _selected_kwargs(tangents, args, kwargs):
    kts, named = args
    t_kts = tangents[0] if tangents else zero
    t_kts = t_kts if isinstance(t_kts, dict) else {}
    return kwarg_tangents(kts, named), TangentDict({k: t_kts.get(k, zero) for k in kts if k not in named})


def _owned_too(func: Callable) -> Callable:
    """``own(t, value)`` (``own_list``) in code differentiated again: the tangent it gives may be written in
    place (a list grown), so its own tangent is owned as well."""
    def run(tangents, args, kwargs):
        value = func(*args, **kwargs)
        return value, func(tangents[0] if tangents else zero, value)

    return run


def _iterate(tangents, args, kwargs):
    """``iterate(seq, dseq)`` in code differentiated again: the pairs it yields, and their tangents."""
    seq, dseq = args
    seq = seq if isinstance(seq, (list, tuple, np.ndarray)) else list(seq)
    t_seq, t_dseq = (tuple(tangents) + (zero, zero))[:2]
    pairs = list(zip(seq, items(dseq, seq)))
    return pairs, TangentList(TangentTuple(t) for t in zip(items(t_seq, seq), items(t_dseq, seq)))


def _added_into(tangents, args, kwargs):
    """``added_into(dy, vjp, g, *args)`` writes into ``dy``, which its loop owns; its tangent is computed
    out of place: ``ddy + vjp(dg, *args)`` (the vjps with an in-place form, reads by index, are linear
    in ``g`` and depend on the array read only through its shape)."""
    value = writes.added_into(*args, **kwargs)
    t_dy = tangents[0] if tangents else zero
    t_g = tangents[2] if len(tangents) > 2 else zero
    return value, add_tangents(t_dy, zero if carries_nothing(t_g) else args[1](t_g, *args[3:], **kwargs))


_SPECIALS: dict[Any, Callable] = {}


def _special(fn: Any) -> Callable | None:
    if not _SPECIALS:
        _SPECIALS.update({
            part: _linear_helper(part, part), drop_last: _linear_helper(drop_last, drop_last),
            unthunk: _linear_helper(unthunk, lambda t: t), as_tangent: _linear_helper(as_tangent, as_tangent),
            list: _sequence(list, TangentList), tuple: _sequence(tuple, TangentTuple), zip: _zip,
            # cotangent containers made by rules/writes.py (cleared) and rules/_sequences.py
            TangentList: _sequence(TangentList, TangentList), TangentTuple: _sequence(TangentTuple, TangentTuple),
            TangentDict: _mapping,
            enumerate: _enumerate, reversed: _reversed, np.delete: _linear_helper(np.delete, np.delete),
            add_tangents: lambda ts, args, kw: (add_tangents(*args), add_tangents(*ts)),
            _util.broadcast_like: _linear_helper(_util.broadcast_like, _util.broadcast_like),
            _util.as_array: _linear_helper(_util.as_array, _util.as_array),
            arrays.to_library: _linear_helper(arrays.to_library, arrays.to_library),
            # A loop's gradient updated in place (optimize/owned.py): the tangents take the copying forms.
            writes.owned: _linear_helper(writes.owned, lambda t: t),
            writes.cleared_in_place: _linear_helper(writes.cleared_in_place, writes.cleared),
            writes.drop_last_in_place: _linear_helper(writes.drop_last_in_place, drop_last),
            writes.added_into: _added_into,
            # Code transformed again marks a function it defined, already marked at its own level.
            jvp_function: lambda tangents, args, kwargs: (args[0], zero), iterate: _iterate,
            _method_value: _method_value_tangent,
            own: _owned_too(own), own_list: _owned_too(own_list),
            # the prologue and bookkeeping of transformed code: selections, linear in the tangents they select
            arg_tangent: _selected_argument, vararg_tangents: _selected_varargs, kwarg_tangents: _selected_kwargs,
            unpack: _linear_helper(unpack, unpack), subscript: _linear_helper(subscript, subscript),
            star: _linear_helper(star, star), keyword_tangents: _linear_helper(keyword_tangents, keyword_tangents),
        })
    try:
        return _SPECIALS.get(fn)
    except TypeError:
        return None


def _writable(t: Any, what: str) -> np.ndarray:
    if not (isinstance(t, np.ndarray) and t.flags.writeable):
        raise NotDifferentiable(f"forward mode: {what} writes into an array whose tangent is not its own")
    return t


def _in_place(fn: Any) -> Callable | None:
    """NumPy functions that write into their first argument: the same write, on its tangent."""
    owner, label = getattr(fn, "__self__", None), getattr(fn, "__name__", "")
    if label == "at" and owner in (np.add, np.subtract):
        def ufunc_at(tangents, args, kwargs):
            owner.at(*args)
            if len(tangents) > 2 and not is_zero_tree(tangents[2]):
                owner.at(_writable(tangents[0], f"np.{owner.__name__}.at"), args[1], tangents[2])
            return None, zero
        return ufunc_at
    if fn is np.put_along_axis or fn is np.copyto:
        def put(tangents, args, kwargs):
            fn(*args, **kwargs)
            value_t = tangents[2] if fn is np.put_along_axis else tangents[1]
            if not (is_zero_tree(tangents[0]) and is_zero_tree(value_t)):
                target = _writable(tangents[0], fn.__name__)
                value_t = 0.0 if is_zero_tree(value_t) else value_t
                if fn is np.put_along_axis:
                    fn(target, args[1], value_t, *args[3:], **kwargs)
                else:
                    fn(target, value_t, *args[2:], **kwargs)
            return None, zero
        return put
    return None


_PURE: set = set()


def _pure_helpers() -> set:
    """Helpers of the rule modules that compute shapes, axes or flags from their inputs: no tangent."""
    if not _PURE:
        _PURE.update({unit_seed, _util.shape_of, _util.reduced_axes, _util.no_value, _util.is_zero, _util.reduced_size,
                      _util.zeros_for, linalg._einsum_terms, linalg._dot_terms, linalg._tensordot_axes,
                      _util.is_array, _util.is_foreign, arrays.is_lazy, arrays.zeros,
                      # this dispatcher's lookups, in its own code differentiated again
                      _vjp_rule, _special, _in_place, _own_code, _may_have_written, holds_floats, is_zero_tree,
                      _all_zero})
    return _PURE


# ---- methods, operators, attributes, subscripts ----------------------------------------
def method(obj: Any, dobj: Any, name: str, tangents: tuple, ktangents: dict, *args: Any, **kwargs: Any):
    """``obj.name(*args, **kwargs)`` and its tangent; list mutators mirror themselves on the tangent list."""
    return method_at(1, obj, dobj, name, tangents, ktangents, *args, **kwargs)


def method_at(level: int, obj: Any, dobj: Any, name: str, tangents: tuple, ktangents: dict, *args: Any,
              **kwargs: Any):
    """:func:`method` with tangents of ``level`` (:func:`call_at`)."""
    if isinstance(obj, list) and name in _LIST_MUTATORS:
        value = getattr(obj, name)(*args, **kwargs)
        return value, _mirror(dobj, name, list(args), list(tangents))  # the same on the tangent list
    if isinstance(obj, dict) and name in ("get", "items", "values", "keys", "copy"):
        return _dict_method(obj, dobj, name, tangents, args)
    if is_number(obj) and registry.method_primitive(name) is not None \
            and receives(registry.receivers_of("method", name), obj):
        prim = registry.method_primitive(name)
        rule = registry.lookup(prim) if prim is not None else None
        if rule is not None:  # the method's own value (x.reshape(2, 3): np.reshape would take 3 for an order)
            return _rule_call(rule, getattr(obj, name), (dobj, *tangents), ktangents, (obj, *args), kwargs,
                              bound=True)
        if prim is not None:
            return call_at(level, prim, (dobj, *tangents), ktangents, obj, *args, **kwargs)
    bound = getattr(obj, name)
    if all(carries_nothing(t) for t in (dobj, *tangents, *ktangents.values())):
        return bound(*args, **kwargs), zero
    return call_at(level, bound, tangents, ktangents, *args, **kwargs)


_DISPATCHERS += (method, method_at)
_LIST_METHODS = {method: 0, method_at: 1}  # where the list comes among their arguments


def _mirrored(at: int, tangents: tuple, args: tuple, kwargs: dict) -> tuple[Any, Any]:
    """A list mutator called through :func:`method` by code differentiated again (a tape's append and
    pop): the call, which mirrors itself on the list's tangent, and the same on the tangents of both lists."""
    tangents = tuple(tangents) + (zero,) * (len(args) - len(tangents))
    obj, dobj, name, ts, kts = args[at:at + 5]  # (no star-unpacking: this too is differentiated again)
    rest, t_rest = list(args[at + 5:]), list(tangents[at + 5:])
    t_obj, t_dobj, t_ts = tangents[at], tangents[at + 1], tangents[at + 3]
    pair = method_at(args[0] if at else 1, obj, dobj, name, ts, kts, *rest, **kwargs)
    return pair, TangentTuple((_mirror(t_obj, name, rest, t_rest), _mirror(t_dobj, name, rest, items(t_ts, ts))))


def _mirror(t: Any, name: str, args: list, targs: list) -> Any:
    """``name`` applied to the tangent ``t`` of a list, with the tangents ``targs`` of its arguments."""
    if not isinstance(t, list):
        if name in ("pop", "reverse", "clear") or all(is_zero_tree(a) for a in targs):
            return zero
        raise NotDifferentiable(f"forward mode: .{name}() on a list whose tangent is not a list")
    # Spelled as methods of t, not getattr(t, name)(...): differentiated once more, each mirrors itself again.
    if name == "pop":
        return t.pop(*args)
    if name == "append":
        t.append(targs[-1])
    elif name == "insert":
        t.insert(args[0], targs[-1])
    elif name == "extend":
        t.extend(items(targs[0], list(args[0])))
    elif name == "reverse":
        t.reverse()
    else:
        t.clear()
    return zero


def _dict_method(obj, dobj, name, tangents, args):
    value = getattr(obj, name)(*args)
    if carries_nothing(dobj) and _all_zero(tangents, {}):
        return value, zero
    dobj = {} if carries_nothing(dobj) else dobj
    if name == "get":
        key = args[0]
        return value, (dobj.get(key, zero) if key in obj else (tangents[1] if len(tangents) > 1 else zero))
    if name == "items":
        return list(value), TangentList(TangentTuple((zero, dobj.get(k, zero))) for k in obj)
    if name == "values":
        return list(value), TangentList(dobj.get(k, zero) for k in obj)
    if name == "copy":
        return value, TangentDict(dobj)
    return value, zero


# ---- loops, unpacking, starred arguments -----------------------------------------------


# ---- parameters of a transformed function -----------------------------------------------


# ---- arrays and lists written in place -------------------------------------------------


