"""The rule registry: how adsrc knows the gradient of a primitive.

A primitive is any callable (a NumPy function or ufunc, a ``math`` function, a
user's own function). Its rule is one vector-Jacobian function per
differentiable positional argument, written as a plain function of
``(g, ans, *args, **kwargs)``: the incoming cotangent, the primal result and
the primal arguments. It returns that argument's contribution, already reduced
to the argument's shape. Arguments past the differentiable ones, and keyword
arguments, are passed along but get no gradient (axis, shape, keepdims...).

A vjp function may declare two optional faster forms, used when an AccThunk
materializes many of its thunks at once:

* ``fuse(calls)``: ``calls`` is a list of ``(args, kwargs)`` of thunks of this
  same vjp; return their summed contribution computed as one batched
  operation, or ``None`` when these calls cannot be batched;
* ``add_into(buffer, *args, **kwargs)``: add the contribution into ``buffer``
  (an array the accumulator owns) in place.

Generated code names each vjp function after the primitive and the argument,
e.g. ``matmul_da``, so the adjoint reads as math.

Forward mode (and second order) also needs each primitive's tangent rules,
registered with :func:`defjvp` right after its vjps. Two declarations register
both sides at once:

* ``defderivative(f, d)``: an elementwise function of one argument, by its
  derivative ``d(ans, x)`` (vjp ``g * d``, jvp ``t * d``);
* ``deflinear(f, *vjps, **forms)``: a linear or multilinear primitive (a
  layout change, a product, a contraction, a linear reduction), by its vjps
  alone: each differentiable argument's jvp is ``f`` itself with the tangent
  in that argument's place (``_tangent.multilinear``). Unless told, the rule
  is marked ``piecewise_linear`` when exactly one argument is differentiable.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..values import as_tangent
from ..values import unthunk, zero
from ._tangent import multilinear

_PLAIN_CONTAINERS = frozenset({list, tuple, dict})

__all__ = [
    "Rule",
    "defvjp",
    "register_adjoint",
    "register_nondifferentiable",
    "lookup",
    "is_nondifferentiable",
    "rules",
    "defjvp",
    "defderivative",
    "deflinear",
]


@dataclass
class Rule:
    """The adjoint of one primitive: its name and one vjp per differentiable argument."""

    func: Callable[..., Any]
    name: str
    vjps: tuple[Callable[..., Any] | None, ...]
    module: str = ""
    notes: str = ""
    extra: dict = field(default_factory=dict)
    jvps: tuple[Callable[..., Any] | None, ...] = ()
    piecewise_linear: bool = False

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.name}" if self.module else self.name


# Attributes of an array (or a function) that carry no gradient: reading them is not a differentiable use.
INERT_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides", "flags", "__name__"})

_rules: dict[Any, Rule] = {}
_nondifferentiable: set[Any] = set()
_version = 0  # counts changes to the rules; a compiled derivative is current only for the version it saw


def version() -> int:
    """How many times rules were registered or replaced: compiled code older than this is recompiled."""
    return _version


def _changed() -> None:
    global _version
    _version += 1


def _key(func: Any) -> Any:
    try:
        hash(func)
        return func
    except TypeError:
        return id(func)


def _arg_names(fn: Callable, count: int) -> list[str]:
    """The names a vjp function gives its primal arguments (after g and ans)."""
    try:
        params = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    names = params[2 : 2 + count]
    return names + [f"arg{i}" for i in range(len(names), count)]


def _guard_zero(fn: Callable, name: str) -> Callable:
    """Wrap a vjp so that a zero cotangent gives a zero contribution for free, and a
    container result is a cotangent container (whose ``+`` adds, not concatenates)."""

    def vjp(g, *args, **kwargs):
        if g is zero:
            return zero
        result = fn(g, *args, **kwargs)
        if type(result) in _PLAIN_CONTAINERS:
            result = as_tangent(result)
        return result

    vjp.__name__ = vjp.__qualname__ = name
    vjp.__doc__ = fn.__doc__
    vjp.__wrapped__ = fn
    vjp.fuse = None
    vjp.add_into = None
    vjp.uses = _used_parameters(fn)
    return vjp


_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_LOAD_FAST",
          "LOAD_DEREF", "LOAD_CLOSURE", "MAKE_CELL", "LOAD_FAST_BORROW",
          "LOAD_FAST_BORROW_LOAD_FAST_BORROW"}


def _used_parameters(fn: Callable) -> Callable[[int], bool] | None:
    """Which positional parameters a vjp reads, from its bytecode.

    Returns a predicate on the position (0 is g, 1 is ans, 2 the first
    primal argument) or None when it cannot tell. The backward sweep passes
    None for a parameter the vjp never reads, so that value need not be
    saved on the tape or kept alive by a pending thunk.
    """
    import dis

    declared = getattr(fn, "__adsrc_uses__", None)
    if declared is not None:
        return declared
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    positional = code.co_varnames[: code.co_argcount]
    has_varargs = bool(code.co_flags & inspect.CO_VARARGS)
    varargs = code.co_varnames[code.co_argcount + code.co_kwonlyargcount] if has_varargs else None
    loaded: set[str] = set()
    try:
        for ins in dis.get_instructions(code):
            if ins.opname in _LOADS:
                value = ins.argval
                loaded.update(value if isinstance(value, tuple) else (value,))
    except Exception:  # an unusual code object: assume every parameter is read
        return None
    flags = tuple(name in loaded for name in positional)
    rest = varargs in loaded if varargs else False

    def used(position: int) -> bool:
        return flags[position] if position < len(flags) else rest

    return used


def _primitive_name(func: Any) -> tuple[str, str]:
    name = getattr(func, "__name__", None) or type(func).__name__
    module = getattr(func, "__module__", None) or ""
    if module.startswith("numpy"):
        module = "numpy" + (".linalg" if "linalg" in module else "")
    return module, name


def defvjp(
    func: Any,
    *vjps: Callable[..., Any] | None,
    name: str | None = None,
    fuse: dict[int, Callable] | None = None,
    add_into: dict[int, Callable] | None = None,
) -> Rule:
    """Register the vjp functions of ``func``, one per differentiable argument.

    ``None`` in ``vjps`` marks a positional argument with no gradient.
    ``fuse`` and ``add_into`` map an argument position to that vjp's batched
    or in-place form (see the module docstring).
    """
    module, default_name = _primitive_name(func)
    prim = name or default_name
    names = _arg_names(next((v for v in vjps if v is not None), lambda g, ans: 0), len(vjps))
    wrapped: list[Callable | None] = []
    for i, fn in enumerate(vjps):
        if fn is None:
            wrapped.append(None)
            continue
        vjp = _guard_zero(fn, f"{prim}_d{names[i]}")
        vjp.fuse = (fuse or {}).get(i)
        vjp.add_into = (add_into or {}).get(i)
        wrapped.append(vjp)
    rule = Rule(func=func, name=prim, vjps=tuple(wrapped), module=module)
    _rules[_key(func)] = rule
    _changed()
    _nondifferentiable.discard(_key(func))
    return rule


def register_adjoint(func: Any, *vjps: Callable[..., Any] | None, **forms: Any):
    """Register a gradient rule for ``func``; the public form of :func:`defvjp`.

    Two spellings:

    * ``register_adjoint(f, vjp_x, vjp_y)``: one ``vjp(g, ans, x, y)`` per
      argument, each returning that argument's contribution;
    * as a decorator, ``@register_adjoint(f)`` on ``rule(ans, g, x, y)`` that
      returns one contribution (or ``adsrc.zero``) per argument, as a tuple.
    """
    if vjps:
        return defvjp(func, *vjps, **forms)

    def decorate(rule_fn: Callable[..., Sequence[Any]]) -> Callable:
        params = [
            p for p in inspect.signature(rule_fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        count = max(len(params) - 2, 1)

        def per_arg(i: int) -> Callable:
            def vjp(g, ans, *args, **kwargs):
                contributions = rule_fn(ans, g, *args, **kwargs)
                if not isinstance(contributions, (tuple, list)):
                    contributions = (contributions,)
                return unthunk(contributions[i])

            vjp.__signature__ = inspect.Signature(
                [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                 for n in ["g", "ans"] + [p.name for p in params[2:]]]
            )
            return vjp

        defvjp(func, *(per_arg(i) for i in range(count)), **forms)
        return rule_fn

    return decorate


def register_nondifferentiable(*funcs: Any) -> None:
    """Mark functions whose output carries no gradient (np.argmax, len, comparisons)."""
    for func in funcs:
        _nondifferentiable.add(_key(func))
        _rules.pop(_key(func), None)
    _changed()


def lookup(func: Any) -> Rule | None:
    """The rule registered for ``func``, or None."""
    try:
        return _rules.get(_key(func))
    except TypeError:
        return None


def is_nondifferentiable(func: Any) -> bool:
    try:
        return _key(func) in _nondifferentiable
    except TypeError:
        return False


def rules() -> list[Rule]:
    """Every registered rule, for documentation and generated tests."""
    return list(_rules.values())


def nondifferentiable() -> list[Any]:
    return list(_nondifferentiable)


# Array methods and attributes (``x.sum(axis=0)``, ``x.T``) are calls of a
# primitive with the object as first argument: ``np.sum(x, axis=0)``.
_methods: dict[str, Any] = {}
_attributes: dict[str, Any] = {}


def defmethod(name: str, func: Any) -> None:
    """``obj.name(*args, **kw)`` on an array differentiates as ``func(obj, *args, **kw)``."""
    _methods[name] = func
    _changed()


def defattribute(name: str, func: Any) -> None:
    """``obj.name`` on an array differentiates as ``func(obj)`` (e.g. ``.T``)."""
    _attributes[name] = func
    _changed()


def method_primitive(name: str) -> Any:
    return _methods.get(name)


def attribute_primitive(name: str) -> Any:
    return _attributes.get(name)


# ---- tangent rules (forward mode) ---------------------------------------------
# A rule's tangent side: one jvp per differentiable positional argument, written
# ``jvp(t, ans, *args, **kwargs)``: the output tangent contributed by that
# argument's tangent ``t`` (the primal result and arguments are passed as for a
# vjp). Forward mode sums the contributions of all arguments.
# ``piecewise_linear=True`` says the primitive is linear, or piecewise linear,
# in its differentiable arguments, so its vjps read the primal values only for
# shapes, options or piecewise-constant masks: differentiating them once more
# gives nothing but the vjp applied to the tangent of the cotangent (second
# order uses this).


def defjvp(func: Any, *jvps: Callable[..., Any] | None, piecewise_linear: bool = False) -> Rule:
    """Register the jvp functions of ``func``, whose vjps must already be registered.

    ``None`` marks an argument with no tangent (an index, a shape). Generated
    forward code names each jvp after the primitive and the argument:
    ``sin_jvp`` when one argument is differentiable, else ``matmul_jvp_a``.
    """
    rule = lookup(func)
    if rule is None:
        raise LookupError(f"defjvp: {getattr(func, '__name__', func)!r} has no registered vjp; call defvjp first")
    names = [(v.__name__[len(rule.name) + 2:] if v is not None else f"arg{i}") for i, v in enumerate(rule.vjps)]
    names += [f"arg{i}" for i in range(len(names), len(jvps))]
    single = sum(j is not None for j in jvps) == 1
    rule.jvps = tuple(
        None if fn is None else _guard_tangent(fn, f"{rule.name}_jvp" if single else f"{rule.name}_jvp_{names[i]}")
        for i, fn in enumerate(jvps)
    )
    rule.piecewise_linear = piecewise_linear
    _changed()
    return rule


def _guard_tangent(fn: Callable, name: str) -> Callable:
    """Wrap a jvp: a zero tangent contributes zero for free, a container result is a
    tangent container, and an array result has the primal result's shape (a
    contribution from a broadcast operand is broadcast to the output)."""
    import numpy as np

    def jvp(t, ans, *args, **kwargs):
        if t is zero:
            return zero
        result = fn(t, ans, *args, **kwargs)
        if type(result) in _PLAIN_CONTAINERS:
            return as_tangent(result)
        if type(ans) is np.ndarray and result is not zero and np.shape(result) != ans.shape:
            result = np.broadcast_to(result, ans.shape)
        return result

    jvp.__name__ = jvp.__qualname__ = name
    jvp.__doc__ = fn.__doc__
    jvp.__wrapped__ = fn
    return jvp


def defderivative(func: Any, derivative: Callable[..., Any], **forms: Any) -> Rule:
    """Register an elementwise function of one argument by its derivative ``d(ans, x)``.

    The vjp is ``g * d(ans, x)`` and the jvp ``t * d(ans, x)``: the rule is
    written once for both modes. Which of ``ans`` and ``x`` it reads is taken
    from ``derivative`` itself, so the backward sweep saves only those.
    """
    params = list(inspect.signature(derivative).parameters)
    if len(params) != 2:
        raise TypeError("defderivative takes d(ans, x), the derivative of an elementwise function of one argument")
    reads = _used_parameters(derivative)

    def by_cotangent(g, ans, x):
        return g * derivative(ans, x)

    def by_tangent(t, ans, x):
        return t * derivative(ans, x)

    for made in (by_cotangent, by_tangent):
        made.__module__ = derivative.__module__  # the rule belongs to the module that defined it
        made.__doc__ = derivative.__doc__
        made.__adsrc_uses__ = (lambda position: position == 0 or reads is None or reads(position - 1))
        made.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                                for n in ["g", *params]])
    rule = defvjp(func, by_cotangent, **forms)
    defjvp(func, by_tangent)
    return rule


def deflinear(func: Any, *vjps: Callable[..., Any] | None, piecewise_linear: bool | None = None,
              **forms: Any) -> Rule:
    """Register a linear or multilinear ``func`` by its vjps: its jvps are ``func`` itself.

    ``vjps`` (and the ``fuse=``/``add_into=``/``name=`` forms) are registered
    as by :func:`defvjp`; each argument that has a vjp gets the jvp
    ``_tangent.multilinear(func, i)``, ``func`` with the tangent in place of
    argument ``i``. ``piecewise_linear`` defaults to True when exactly one
    argument is differentiable (the vjps then read the primal values only for
    shapes and options) and to False otherwise (a product's vjp for one factor
    reads the other factor).
    """
    rule = defvjp(func, *vjps, **forms)
    if piecewise_linear is None:
        piecewise_linear = sum(v is not None for v in vjps) == 1
    defjvp(func, *(None if v is None else multilinear(func, i) for i, v in enumerate(vjps)),
           piecewise_linear=piecewise_linear)
    return rule
