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
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InvalidArgument
from ..values import as_tangent
from ..values import unthunk, zero
from ..values.arrays import is_lazy
from ._tangent import multilinear
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


def complex_error(name: str, what: str) -> InvalidArgument:
    return InvalidArgument(
        f"{name} {what} a complex value, but this rule is written for real values only (its gradient "
        f"for complex values would be silently wrong). The rules that accept complex values are listed in "
        f"docs/complex.md; compute this step from real and imaginary parts (np.real, np.imag) instead")


def _is_complex(value: Any) -> bool:
    """A dtype kind check: a complex array or NumPy scalar, or a Python complex."""
    dtype = getattr(value, "dtype", None)
    if isinstance(dtype, np.dtype):  # (a NumPy type passed as a dtype= argument has a descriptor, not a dtype)
        return dtype.kind == "c"
    return type(value) is complex


def _any_complex(ans: Any, args: tuple) -> bool:
    """Whether a call's result or any argument (a sequence of arrays included) is complex."""
    for a in (ans, *args):
        kind = type(a)
        if kind is float or kind is _FLOAT64 or a is None or kind is int:  # the common cases, by exact type
            continue
        if kind is np.ndarray:
            if a.dtype.kind == "c":
                return True
        elif kind in (list, tuple):
            if _any_complex(None, a):  # a (nested) sequence of arrays: np.block's, np.concatenate's
                return True
        elif _is_complex(a):
            return True
    return False


def meets_complex(values: Sequence[Any]) -> bool:
    """Whether a vjp's ``(ans, *args)`` hold a complex value (for a caller that bypasses the vjp's wrapper)."""
    return _any_complex(values[0] if values else None, tuple(values[1:]))


def _real_part(value: Any) -> Any:
    return value.real if type(value) is complex else np.real(value)


def _real_where_real(result: Any, arg: Any) -> Any:
    """The contributions to a list or tuple of arrays, each real where its item is real."""
    if type(arg) in _PLAIN_CONTAINERS:
        if type(result) not in _PLAIN_CONTAINERS or len(arg) != len(result):
            return result
        if isinstance(result, dict):
            return {k: _real_where_real(r, arg.get(k)) for k, r in result.items()} if isinstance(arg, dict) else result
        return type(result)(_real_where_real(r, a) for r, a in zip(result, arg))
    if arg is not None and _is_complex(result) and not _is_complex(arg):
        return _real_part(result)
    return result


def _guard_zero(fn: Callable, name: str, rule: Rule, position: int) -> Callable:
    """Wrap a vjp so that a zero cotangent gives a zero contribution for free, a
    container result is a cotangent container (whose ``+`` adds, not concatenates),
    and complex values follow docs/complex.md: a rule not marked ``complex_ok``
    refuses a complex result or argument, and a complex contribution to a real
    argument keeps its real part (the imaginary part of the cotangent of a real
    value carries no information)."""

    def vjp(g, *args, **kwargs):
        if g is zero:
            return zero
        if not rule.complex_ok and _any_complex(args[0] if args else None, args[1:]):
            raise complex_error(f"the gradient rule {name}", "met")
        result = fn(g, *args, **kwargs)
        # The common types are decided by their exact type, without a lookup.
        kind = type(result)
        if kind is float or kind is _FLOAT64:
            return result
        arg = args[position + 1] if position + 1 < len(args) else None
        if kind in _PLAIN_CONTAINERS:
            return as_tangent(_real_where_real(result, arg))
        if kind is complex or getattr(getattr(result, "dtype", None), "kind", None) == "c":
            if arg is not None and type(arg) not in _PLAIN_CONTAINERS and not _is_complex(arg):
                return _real_part(result)
        return result

    vjp.__name__ = vjp.__qualname__ = name
    vjp.__doc__ = fn.__doc__
    vjp.__wrapped__ = fn
    vjp.fuse = None
    vjp.add_into = None
    reads = _used_parameters(fn)
    # A rule that refuses complex values tells by its arguments (a real-only rule's result is complex only
    # when an argument is); one whose vjp does not read them all must see its result instead. Rules checked
    # for complex values read what they read.
    code = getattr(fn, "__code__", None)
    parameters = code.co_argcount if code is not None and not code.co_flags & inspect.CO_VARARGS else None
    reads_every_argument = reads is None or parameters is not None and all(reads(q) for q in range(2, parameters))
    vjp.uses = reads if rule.complex_ok or reads_every_argument else (lambda p: p == 1 or reads(p))
    vjp.position = position
    return vjp


def _guard_fuse(fuse: Callable | None, name: str, rule: Rule, position: int) -> Callable | None:
    """The batched form of a vjp, with the complex checks of the vjp itself."""
    if fuse is None:
        return None

    def fused(calls):
        if not rule.complex_ok and any(_any_complex(args[1], args[2:]) for args, _ in calls):
            raise complex_error(f"the gradient rule {name}", "met")
        result = fuse(calls)
        if result is not None and _is_complex(result):
            arg = calls[0][0][position + 2] if position + 2 < len(calls[0][0]) else None
            if arg is not None and type(arg) not in _PLAIN_CONTAINERS and not _is_complex(arg):
                return _real_part(result)
        return result

    fused.__wrapped__ = fuse
    return fused


def _guard_add_into(add_into: Callable | None, name: str, rule: Rule) -> Callable | None:
    """The in-place form of a vjp, with the complex check of the vjp itself. (The accumulator makes its
    buffer complex before a complex cotangent is added into it.)"""
    if add_into is None:
        return None

    def added(buffer, g, *args, **kwargs):
        if not rule.complex_ok and _any_complex(args[0] if args else None, args[1:]):
            raise complex_error(f"the gradient rule {name}", "met")
        return add_into(buffer, g, *args, **kwargs)

    added.__wrapped__ = add_into
    return added


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
            add_into: dict | None, user: bool, module: str | None = None) -> Rule:
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
        vjp = _guard_user(fn, label, i, names[i], prim) if user else _guard_zero(fn, label, rule, i)
        vjp.fuse = _guard_fuse((fuse or {}).get(i), vjp.__name__, rule, i)
        vjp.add_into = _guard_add_into((add_into or {}).get(i), vjp.__name__, rule)
        wrapped.append(vjp)
    rule.vjps = tuple(wrapped)
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


# ---- rules registered by users: checked contributions, one parameter order ------------
def _describe(value: Any) -> str:
    if value is None:
        return "None"
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return f"a {dtype} value of shape {np.shape(value)}"
    return f"a {type(value).__name__}"


def _is_float_argument(value: Any) -> bool:
    """An argument that can carry a gradient: a float (or float array); integers, bools, strings cannot."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, float):
        return True
    dtype = getattr(value, "dtype", None)
    return dtype is not None and dtype.kind == "f"


def _check_contribution(result: Any, arg: Any, where: str) -> Any:
    """``result`` if it is a valid contribution to ``arg`` (same shape, a real dtype); else a clear error.

    Without this check a wrong-shaped contribution would be broadcast silently
    when it is added to the argument's gradient.
    """
    if result is zero:
        return result
    if result is None:
        raise InvalidArgument(f"{where} returned None; return adsrc.zero for an argument with no gradient")
    if _is_complex(result):
        raise complex_error(where, "returned")
    if isinstance(arg, (list, tuple)):
        if not isinstance(result, (list, tuple)) or len(result) != len(arg):
            raise InvalidArgument(f"{where} returned {_describe(result)} for a {type(arg).__name__} of "
                                  f"{len(arg)} items: it must return one contribution per item, as a list")
        return as_tangent([_check_contribution(r, a, f"{where}, item {k}")
                           for k, (r, a) in enumerate(zip(result, arg))])
    if isinstance(arg, dict):
        if not isinstance(result, dict) or set(result) != set(arg):
            raise InvalidArgument(f"{where} returned {_describe(result)} for a dict with keys {sorted(arg)}: "
                                  f"it must return a dict with the same keys")
        return as_tangent({k: _check_contribution(result[k], arg[k], f"{where}, key {k!r}") for k in arg})
    if not _is_float_argument(arg):
        return result  # an integer or other constant argument: it receives no gradient anyway
    if type(result) in _PLAIN_CONTAINERS or isinstance(result, dict):
        raise InvalidArgument(f"{where} returned a {type(result).__name__} for {_describe(arg)}")
    dtype = getattr(result, "dtype", None)
    kind = dtype.kind if dtype is not None else ("f" if isinstance(result, (float, int)) else "O")
    if kind not in "fiu" or isinstance(result, bool):
        raise InvalidArgument(f"{where} returned {_describe(result)} for {_describe(arg)}: a contribution "
                              f"must be a real number or array of numbers, like its argument")
    if np.shape(result) != np.shape(arg):
        raise InvalidArgument(
            f"{where} returned a contribution of shape {np.shape(result)} for an argument of shape "
            f"{np.shape(arg)}: a vjp must return its argument's shape (adsrc.rules.unbroadcast(g, x) sums "
            f"a broadcast cotangent back), so it is not broadcast silently")
    return result


def _guard_user(fn: Callable, name: str, position: int, arg_name: str, prim: str) -> Callable:
    """The wrapper of a vjp registered with :func:`register_adjoint`: the checks of
    :func:`_guard_zero`, and the contribution's shape and dtype checked against its
    argument, naming the rule. (Built-in rules skip this check: they are tested.)"""
    where = f"the gradient rule registered for {prim} (argument {position}, {arg_name!r}, vjp {name})"

    def vjp(g, ans, *args, **kwargs):
        if g is zero:
            return zero
        result = unthunk(fn(g, ans, *args, **kwargs))
        if _is_complex(ans):
            raise complex_error(where, "met")
        arg = args[position] if position < len(args) else None
        if arg is None:
            return as_tangent(result) if type(result) in _PLAIN_CONTAINERS else result
        return _check_contribution(result, arg, where)

    reads = _used_parameters(fn)
    vjp.__name__ = vjp.__qualname__ = name
    vjp.__doc__ = fn.__doc__
    vjp.__wrapped__ = fn
    vjp.fuse = None
    vjp.add_into = None
    # The check reads the argument itself, so the backward sweep must keep it.
    vjp.uses = lambda p: p == 0 or p == position + 2 or reads is None or reads(p)
    return vjp


_OLD_ORDER = ("adsrc.register_adjoint rules take (g, ans, *args): the incoming cotangent g first, "
              "then the primal result ans, then the call's arguments, in both spellings "
              "(register_adjoint(f, vjp) and @register_adjoint(f))")


def _check_order(fn: Callable, label: str) -> None:
    """Refuse a rule written in the decorator's former ``(ans, g, *args)`` order, which would
    otherwise run with its cotangent and result swapped."""
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return
    if (params[:1] == ["ans"]) or (len(params) > 1 and params[1] == "g"):
        raise TypeError(f"{label} takes ({', '.join(params)}); {_OLD_ORDER}. Swap its first two parameters: "
                        f"def rule(g, ans, ...)")


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
                _check_order(vjp, f"the vjp of argument {i} given to register_adjoint({label}, ...)")
        return _define(func, vjps, forms.get("name"), forms.get("fuse"), forms.get("add_into"), user=True)

    def decorate(rule_fn: Callable[..., Sequence[Any]]) -> Callable:
        _check_order(rule_fn, f"@register_adjoint({label}) on {getattr(rule_fn, '__name__', rule_fn)}")
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
                forms.get("add_into"), user=True)
        return rule_fn

    return decorate


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
        if not rule.complex_ok and (_is_complex(t) or _any_complex(ans, args)):
            raise complex_error(f"the tangent rule {name}", "met")
        result = fn(t, ans, *args, **kwargs)
        if type(result) in _PLAIN_CONTAINERS:
            return as_tangent(result)
        if _is_complex(result) and not _is_complex(ans) and ans is not None:
            result = _real_part(result)
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


def times(g: Any, d: Any) -> Any:
    """``g * d``, except that a zero ``g`` gives exactly zero even where ``d`` is infinite or NaN.

    A zero cotangent (or tangent) means the result does not depend on this
    element (a branch ``np.where`` discarded, an input that does not move), so
    its contribution is zero whatever the derivative there: the convention
    0 * inf = 0. Elementwise rules whose derivative is infinite or undefined at
    some input (sqrt and cbrt at 0, log at 0, arcsin at 1, x**0.5 at 0, sqrt of
    a negative number in a discarded branch) multiply through this, so that
    ``np.where(x > 0, np.sqrt(x), 0.0)`` has gradient 0, not NaN, at x <= 0.
    Where ``g`` is not zero, an infinite derivative stays infinite.
    """
    return zero_where_zero(g * d, g)


def zero_where_zero(out: Any, g: Any) -> Any:
    """``out`` (a product or quotient of ``g``) with exact zeros where ``g`` is zero, if it is not finite.

    The finite case, by far the common one, costs one check; see :func:`times`.
    """
    if type(out) is float:
        if g == 0 and not math.isfinite(out):
            return 0.0
        return out
    if not is_lazy(out) and np.isfinite(out).all():  # a Dask array is not computed to decide
        return out
    return np.where(np.equal(g, 0), 0, out)


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
    reads = _used_parameters(derivative)

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
    if not singular:  # specialized code may inline ``g * d(ans, x)`` (templates.py)
        rule.extra["templates"] = {0: derivative_template(derivative, params)}
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
