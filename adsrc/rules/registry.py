"""The rule registry: how adsrc knows the gradient of a primitive.

A primitive is any callable (a NumPy function or ufunc, a ``math`` function, a
user's own function). Its rule is one vector-Jacobian function per
differentiable positional argument, written as a plain function of
``(g, ans, *args, **kwargs)``: the incoming cotangent, the primal result and
the primal arguments. It returns that argument's contribution, already reduced
to the argument's shape. Arguments past the differentiable ones are passed
along but get no gradient (axis, shape, keepdims...); a differentiable value
passed there is refused when the function is compiled. A keyword argument
that carries a gradient is bound to its parameter's position first.

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

import numpy as np

from ..errors import NotDifferentiable
from ..values import as_tangent
from ..values import unthunk, zero
from ._tangent import multilinear
from .guards import (any_complex, check_order, complex_error, guard_add_into, guard_fuse, guard_user, guard_zero,
                     is_complex, meets_complex, real_part, used_parameters)
from .singular import times, zero_where_zero  # noqa: F401  (rule modules import them from here)
from .templates import derivative_template

_PLAIN_CONTAINERS = frozenset({list, tuple, dict})
_FLOAT64 = np.float64

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
    "times",
    "zero_where_zero",
    "complex_error",
    "meets_complex",
    "allow_complex",
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
    complex_ok: bool = False  # checked correct for complex values (docs/complex.md); else complex is refused
    tag: str = ""  # tells apart two functions of one qualified name (a function defined again)

    @property
    def qualname(self) -> str:
        """The rule's name in generated code (which looks it up by this name): unique in the registry."""
        return (f"{self.module}.{self.name}" if self.module else self.name) + self.tag


# Attributes of an array (or a function) that carry no gradient: reading them is not a differentiable use.
INERT_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides", "flags", "__name__"})

_rules: dict[Any, Rule] = {}
_nondifferentiable: set[Any] = set()
_version = 0  # counts changes to the rules; a compiled derivative is current only for the version it saw


# How a user rule's tangent is derived from its vjp (set by api/derived_tangents.py, a layer above, which
# transposes the vjp by differentiating it): called as derive(source, index, t, ans, args, kwargs, rule, i).
_tangent_deriver: list[Callable[..., Any]] = []


def set_tangent_deriver(derive: Callable[..., Any]) -> None:
    """Install the function that derives a user rule's missing tangent from its vjp (api layer)."""
    _tangent_deriver[:] = [derive]


def _derived_tangents(rule: Rule, sources: Sequence[tuple[Callable, int | None] | None]) -> tuple:
    """One tangent per differentiable argument of a user rule with no jvp: its vjp is linear in the
    cotangent, so the tangent is the vjp's transpose, J t = (g -> J^T g)^T t."""

    def derived(i: int, source: Callable, index: int | None) -> Callable:
        def tangent(t, ans, *args, **kwargs):
            if not _tangent_deriver:
                raise NotDifferentiable(f"{rule.qualname} has no tangent rule for argument {i}")
            return _tangent_deriver[0](source, index, t, ans, args, kwargs, rule, i)

        return _guard_tangent(tangent, f"{rule.name}_jvp_{i}", rule)

    return tuple(None if s is None else derived(i, *s) for i, s in enumerate(sources))


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


def _primitive_name(func: Any) -> tuple[str, str]:
    name = getattr(func, "__name__", None) or type(func).__name__
    module = getattr(func, "__module__", None) or ""
    if module.startswith("numpy"):
        module = "numpy" + (".linalg" if "linalg" in module else ".fft" if "fft" in module else "")
    return module, name


def defvjp(
    func: Any,
    *vjps: Callable[..., Any] | None,
    name: str | None = None,
    fuse: dict[int, Callable] | None = None,
    add_into: dict[int, Callable] | None = None,
    module: str | None = None,
) -> Rule:
    """Register the vjp functions of ``func``, one per differentiable argument.

    ``None`` in ``vjps`` marks a positional argument with no gradient.
    ``fuse`` and ``add_into`` map an argument position to that vjp's batched
    or in-place form (see the module docstring). ``name`` and ``module`` name
    the primitive where its own ``__name__`` and ``__module__`` do not say it
    (a SciPy ufunc has no module; ``scipy.stats.norm.logpdf`` is a bound
    method): its qualified name is ``module.name``.
    """
    return _define(func, vjps, name, fuse, add_into, user=False, module=module)


def _define(func: Any, vjps: Sequence[Callable | None], name: str | None, fuse: dict | None,
            add_into: dict | None, user: bool, module: str | None = None,
            sources: Sequence[tuple[Callable, int | None] | None] | None = None) -> Rule:
    default_module, default_name = _primitive_name(func)
    module = default_module if module is None else module
    prim = name or default_name
    names = _arg_names(next((v for v in vjps if v is not None), lambda g, ans: 0), len(vjps))
    rule = Rule(func=func, name=prim, vjps=(), module=module)
    wrapped: list[Callable | None] = []
    for i, fn in enumerate(vjps):
        if fn is None:
            wrapped.append(None)
            continue
        label = f"{prim}_d{names[i]}"
        vjp = guard_user(fn, label, i, names[i], prim) if user else guard_zero(fn, label, rule, i)
        vjp.fuse = guard_fuse((fuse or {}).get(i), vjp.__name__, rule, i)
        vjp.add_into = guard_add_into((add_into or {}).get(i), vjp.__name__, rule)
        wrapped.append(vjp)
    rule.vjps = tuple(wrapped)
    if user:  # the tangents follow from the vjps until the user registers their own (defjvp)
        rule.jvps = _derived_tangents(rule, sources if sources is not None else
                                      [None if fn is None else (fn, None) for fn in vjps])
    key = _key(func)
    # Generated code finds a rule by its qualname: a second function of the same name (a function
    # defined again, in a notebook or a loop, with a rule of its own) gets a name of its own, so that
    # code compiled for it cannot pick up the rule of the first.
    previous = _rules.get(key)
    if previous is not None:
        rule.tag = previous.tag
    else:
        taken = {r.qualname for r in _rules.values()}
        count = 1
        while rule.qualname in taken:
            count += 1
            rule.tag = f"<{count}>"
    _rules[key] = rule
    _changed()
    _nondifferentiable.discard(_key(func))
    return rule


def register_adjoint(func: Any, *vjps: Callable[..., Any] | None, **forms: Any):
    """Register a gradient rule for ``func``; the public form of :func:`defvjp`.

    Both spellings take the parameters in the same order, ``(g, ans, *args)``:
    the incoming cotangent, the primal result, then the call's arguments.

    * ``register_adjoint(f, vjp_x, vjp_y)``: one ``vjp(g, ans, x, y)`` per
      argument, each returning that argument's contribution;
    * as a decorator, ``@register_adjoint(f)`` on ``rule(g, ans, x, y)`` that
      returns one contribution (or ``adsrc.zero``) per argument, as a tuple.

    A rule whose first parameter is named ``ans`` (or whose second is named
    ``g``) is written in the order the decorator once took; it is refused with a
    TypeError rather than run with its cotangent and result swapped. Each
    contribution is checked when it is computed: one whose shape or dtype does
    not match its argument raises InvalidArgument naming the rule (and, in a
    note, the original line), instead of being broadcast silently.

    >>> import numpy as np, adsrc
    >>> def softplus(x):
    ...     return np.log1p(np.exp(x))
    >>> _ = adsrc.register_adjoint(softplus, lambda g, ans, x: g / (1.0 + np.exp(-x)))
    >>> def loss(x):
    ...     return np.sum(softplus(x))
    >>> adsrc.grad(loss)(np.array([0.0])).tolist()
    [0.5]
    """
    label = getattr(func, "__name__", repr(func))
    _run_miss_hooks()  # adsrc's own rules of a library imported since come first, so that this one replaces them
    unknown = set(forms) - {"name", "fuse", "add_into"}
    if unknown:
        raise TypeError(f"register_adjoint() got unexpected keyword arguments {sorted(unknown)}")
    if vjps:
        for i, vjp in enumerate(vjps):
            if vjp is not None:
                check_order(vjp, f"the vjp of argument {i} given to register_adjoint({label}, ...)")
        return _define(func, vjps, forms.get("name"), forms.get("fuse"), forms.get("add_into"), user=True)

    def decorate(rule_fn: Callable[..., Sequence[Any]]) -> Callable:
        check_order(rule_fn, f"@register_adjoint({label}) on {getattr(rule_fn, '__name__', rule_fn)}")
        params = [
            p for p in inspect.signature(rule_fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        count = max(len(params) - 2, 1)

        def per_arg(i: int) -> Callable:
            def vjp(g, ans, *args, **kwargs):
                contributions = rule_fn(g, ans, *args, **kwargs)
                if not isinstance(contributions, (tuple, list)):
                    contributions = (contributions,)
                return unthunk(contributions[i])

            vjp.__signature__ = inspect.Signature(
                [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                 for n in ["g", "ans"] + [p.name for p in params[2:]]]
            )
            vjp.__module__ = rule_fn.__module__  # the user's rule, not one of adsrc's own families
            return vjp

        _define(func, [per_arg(i) for i in range(count)], forms.get("name"), forms.get("fuse"),
                forms.get("add_into"), user=True, sources=[(rule_fn, i) for i in range(count)])
        return rule_fn

    return decorate


def computed_once(compute: Callable[..., Any]) -> Callable[..., Any]:
    """``compute(g, ans, *args, **kwargs)`` for a rule whose vjps, one per argument, all read one result
    (jvp's, odeint's: one sweep gives every argument's cotangent): run once for the same cotangent, result
    and arguments (by identity), however many of the vjps ask. The last result is kept till the next call."""
    last: list[Any] = []

    def once(g: Any, ans: Any, *args: Any, **kwargs: Any) -> Any:
        if last and last[0] is g and last[1] is ans and len(last[2]) == len(args) \
                and all(a is b for a, b in zip(last[2], args)) and last[3].keys() == kwargs.keys() \
                and all(last[3][k] is v for k, v in kwargs.items()):
            return last[4]
        result = compute(g, ans, *args, **kwargs)
        last[:] = [g, ans, args, kwargs, result]
        return result

    return once


def register_nondifferentiable(*funcs: Any) -> None:
    """Mark functions whose output carries no gradient (np.argmax, len, comparisons).

    >>> import numpy as np, adsrc
    >>> def bucket(x):
    ...     return np.floor(x * 4.0) / 4.0
    >>> adsrc.register_nondifferentiable(bucket)
    >>> def f(x):
    ...     return np.sum(x * bucket(x))
    >>> adsrc.grad(f)(np.array([0.3, 0.6])).tolist()
    [0.25, 0.5]
    """
    _run_miss_hooks()
    for func in funcs:
        _nondifferentiable.add(_key(func))
        _rules.pop(_key(func), None)
    _changed()


_miss_hooks: list[Callable[[], bool]] = []


def on_miss(hook: Callable[[], bool]) -> None:
    """Call ``hook()`` when a lookup finds no rule; if it returns True (it registered rules), look again.
    (rules/optional.py registers the rules of a library the program imported after adsrc.)"""
    _miss_hooks.append(hook)


def _run_miss_hooks() -> None:
    for hook in _miss_hooks:
        hook()


def lookup(func: Any) -> Rule | None:
    """The rule registered for ``func``, or None."""
    try:
        rule = _rules.get(_key(func))
    except TypeError:
        return None
    if rule is None and _miss_hooks and any([hook() for hook in _miss_hooks]):
        rule = _rules.get(_key(func))
    return rule


def is_nondifferentiable(func: Any) -> bool:
    """Whether ``func`` is registered as having no gradient (after loading, as :func:`lookup` does, the rules
    of a library imported since: scipy.special.gammasgn)."""
    try:
        key = _key(func)
        return key in _nondifferentiable or (any([hook() for hook in _miss_hooks]) and key in _nondifferentiable)
    except TypeError:
        return False


def rules() -> list[Rule]:
    """Every registered rule, for documentation and generated tests."""
    return list(_rules.values())


def nondifferentiable() -> list[Any]:
    return list(_nondifferentiable)


# Array methods and attributes (``x.sum(axis=0)``, ``x.T``) are calls of a
# primitive with the object as first argument: ``np.sum(x, axis=0)``. Each
# declares the values it is a method of (its receivers): "array" (NumPy arrays
# and scalars, and the arrays of other libraries that dispatch to NumPy),
# "number" (those and Python numbers: ``.real``, ``.conjugate()``) or "dict".
# A method of the same name on any other object (a user's ``parser.get(w)``)
# is that object's own: the front end uses the rule only where it can show the
# receiver is of its kind, and otherwise resolves the call when it runs
# (frontend/receivers.py, calls.py).
RECEIVERS = ("array", "number", "dict")
_methods: dict[str, Any] = {}
_attributes: dict[str, Any] = {}
_receivers: dict[tuple[str, str], str] = {}  # ("method" or "attribute", name) -> receivers


def defmethod(name: str, func: Any, receivers: str = "array") -> None:
    """``obj.name(*args, **kw)`` on a value of kind ``receivers`` differentiates as ``func(obj, *args, **kw)``."""
    if receivers not in RECEIVERS:
        raise ValueError(f"receivers must be one of {RECEIVERS}, not {receivers!r}")
    _methods[name] = func
    _receivers["method", name] = receivers
    _changed()


def defattribute(name: str, func: Any, receivers: str = "array") -> None:
    """``obj.name`` on a value of kind ``receivers`` differentiates as ``func(obj)`` (e.g. ``.T``)."""
    if receivers not in RECEIVERS:
        raise ValueError(f"receivers must be one of {RECEIVERS}, not {receivers!r}")
    _attributes[name] = func
    _receivers["attribute", name] = receivers
    _changed()


def method_primitive(name: str) -> Any:
    return _methods.get(name)


def attribute_primitive(name: str) -> Any:
    return _attributes.get(name)


def receivers_of(what: str, name: str) -> str | None:
    """The receivers (see RECEIVERS) of the method (``what="method"``) or attribute ``name``, or None."""
    return _receivers.get((what, name))


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
        None if fn is None else _guard_tangent(fn, f"{rule.name}_jvp" if single else f"{rule.name}_jvp_{names[i]}",
                                               rule)
        for i, fn in enumerate(jvps)
    )
    rule.piecewise_linear = piecewise_linear
    _changed()
    return rule


def _guard_tangent(fn: Callable, name: str, rule: Rule) -> Callable:
    """Wrap a jvp: a zero tangent contributes zero for free, a container result is a
    tangent container, an array result has the primal result's shape (a
    contribution from a broadcast operand is broadcast to the output), a rule not
    marked ``complex_ok`` refuses complex values, and the tangent of a real result
    is real."""

    def jvp(t, ans, *args, **kwargs):
        if t is zero:
            return zero
        if not rule.complex_ok and (is_complex(t) or any_complex(ans, args)):
            raise complex_error(f"the tangent rule {name}", "met")
        result = fn(t, ans, *args, **kwargs)
        if type(result) in _PLAIN_CONTAINERS:
            return as_tangent(result)
        if is_complex(result) and not is_complex(ans) and ans is not None:
            result = real_part(result)
        if type(ans) is np.ndarray and result is not zero and np.shape(result) != ans.shape:
            result = np.broadcast_to(result, ans.shape)
        return result

    jvp.__name__ = jvp.__qualname__ = name
    jvp.__doc__ = fn.__doc__
    jvp.__wrapped__ = fn
    return jvp


def allow_complex(*funcs: Any) -> None:
    """Mark the rules of ``funcs`` as correct for complex values under docs/complex.md's convention.

    Every other rule refuses a complex argument or result when it runs.
    """
    for func in funcs:
        rule = lookup(func)
        if rule is None:
            raise LookupError(f"allow_complex: {getattr(func, '__name__', func)!r} has no registered rule")
        rule.complex_ok = True
    _changed()


def defderivative(func: Any, derivative: Callable[..., Any], singular: bool = False, **forms: Any) -> Rule:
    """Register an elementwise function of one argument by its derivative ``d(ans, x)``.

    The vjp is ``g * d(ans, x)`` and the jvp ``t * d(ans, x)``: the rule is
    written once for both modes. Which of ``ans`` and ``x`` it reads is taken
    from ``derivative`` itself, so the backward sweep saves only those.
    ``singular=True`` declares a derivative that is infinite or undefined at
    some inputs: the products are then taken with :func:`times`, where a zero
    cotangent or tangent contributes exactly zero.
    """
    params = list(inspect.signature(derivative).parameters)
    if len(params) != 2:
        raise TypeError("defderivative takes d(ans, x), the derivative of an elementwise function of one argument")
    reads = used_parameters(derivative)

    if singular:
        def by_cotangent(g, ans, x):
            return times(g, derivative(ans, x))

        def by_tangent(t, ans, x):
            return times(t, derivative(ans, x))
    else:
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
    # specialized code may inline ``g * d(ans, x)``, or ``singular.times(g, d(ans, x))`` (templates.py)
    rule.extra["templates"] = {0: derivative_template(derivative, params, singular)}
    return rule


def _same_option(a: Any, b: Any, layout: bool) -> bool:
    """Two calls' values at one parameter agree for a linear vjp: the same object, equal numbers, strings,
    tuples or arrays (indices), or (``layout``: the argument and the result, whose values the vjp reads
    only for their shapes) arrays of one shape and dtype."""
    if a is b:
        return True
    if type(a) is np.ndarray and type(b) is np.ndarray:  # indices, a mask: the same values
        return a.shape == b.shape and a.dtype == b.dtype and (layout or bool(np.array_equal(a, b)))
    if type(a) is not type(b) or type(a) not in (int, float, str, bool, tuple, type(None)):
        return False
    try:
        return bool(a == b)
    except Exception:
        return False


def _summed_first(vjp: Callable, position: int) -> Callable:
    """The batched form of a linear function's only vjp: where every call has one layout (the argument's
    and result's shapes, the same options), the sum of the contributions is one call on the sum of the
    cotangents: ``Σ gᵢ.T`` is ``(Σ gᵢ).T``. None otherwise (each call then runs)."""
    def fuse(calls):
        (first, options), rest = calls[0], calls[1:]
        gs = [args[0] for args, _ in calls]
        if type(gs[0]) is not np.ndarray or any(type(g) is not np.ndarray or g.shape != gs[0].shape
                                                 or g.dtype != gs[0].dtype for g in gs):
            return None
        count, layout = len(first), (1, position + 2)  # the result and the argument: read for their layout
        for args, keywords in rest:
            if len(args) != count or keywords.keys() != options.keys():
                return None
            for p in range(1, count):  # most often the same objects at every step: one identity test each
                a, b = args[p], first[p]
                if a is not b and not _same_option(a, b, p in layout):
                    return None
            if options and not all(_same_option(keywords[k], options[k], False) for k in options):
                return None
        return vjp(np.add.reduce(np.stack(gs)), *first[1:], **options)

    fuse.one_layout = True  # it fuses calls of one layout only (tests/test_rules.py draws them so)
    return fuse


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
    single = [i for i, v in enumerate(vjps) if v is not None]
    if len(single) == 1 and not forms.get("fuse"):  # Σ vjp(g_i) is vjp(Σ g_i) for calls of one layout
        forms = {**forms, "fuse": {single[0]: _summed_first(vjps[single[0]], single[0])}}
    rule = defvjp(func, *vjps, **forms)
    if piecewise_linear is None:
        piecewise_linear = sum(v is not None for v in vjps) == 1
    defjvp(func, *(None if v is None else multilinear(func, i) for i, v in enumerate(vjps)),
           piecewise_linear=piecewise_linear)
    return rule
