"""The wrappers around every rule's vjp and jvp, and the checks of rules users register.

``guard_zero`` wraps a built-in rule's vjp: a zero cotangent gives zero for
free, a container result becomes a cotangent container, and complex values
follow docs/complex.md (a rule not marked ``complex_ok`` refuses them; a
complex contribution to a real argument keeps its real part). ``guard_fuse``
and ``guard_add_into`` give the batched and in-place forms the same complex
checks. ``used_parameters`` reads from a vjp's bytecode which parameters it
reads, so that the backward sweep need not keep the others. ``guard_user``
and ``check_order`` check rules registered with ``register_adjoint``: the
parameter order, and each contribution's shape and dtype against its
argument. registry.py applies them when a rule is defined (``rule`` below is its
``Rule``: only its ``complex_ok`` is read).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InvalidArgument
from ..values import as_tangent, unthunk, zero
from ..values.pytrees import is_object

_PLAIN_CONTAINERS = frozenset({list, tuple, dict})
_FLOAT64 = np.float64


def complex_error(name: str, what: str) -> InvalidArgument:
    return InvalidArgument(
        f"{name} {what} a complex value, but this rule is written for real values only (its gradient "
        f"for complex values would be silently wrong). The rules that accept complex values are listed in "
        f"docs/complex.md; compute this step from real and imaginary parts (np.real, np.imag) instead")


def is_complex(value: Any) -> bool:
    """A dtype kind check: a complex array or NumPy scalar, or a Python complex."""
    dtype = getattr(value, "dtype", None)
    if isinstance(dtype, np.dtype):  # (a NumPy type passed as a dtype= argument has a descriptor, not a dtype)
        return dtype.kind == "c"
    return type(value) is complex


def any_complex(ans: Any, args: tuple) -> bool:
    """Whether a call's result or any argument (a sequence of arrays included) is complex."""
    for a in (ans, *args):
        kind = type(a)
        if kind is float or kind is _FLOAT64 or a is None or kind is int:  # the common cases, by exact type
            continue
        if kind is np.ndarray:
            if a.dtype.kind == "c":
                return True
        elif kind in (list, tuple):
            if any_complex(None, a):  # a (nested) sequence of arrays: np.block's, np.concatenate's
                return True
        elif is_complex(a):
            return True
    return False


def meets_complex(values: Sequence[Any]) -> bool:
    """Whether a vjp's ``(ans, *args)`` hold a complex value (for a caller that bypasses the vjp's wrapper)."""
    return any_complex(values[0] if values else None, tuple(values[1:]))


def real_part(value: Any) -> Any:
    return value.real if type(value) is complex else np.real(value)


def real_where_real(result: Any, arg: Any) -> Any:
    """The contributions to a list or tuple of arrays, each real where its item is real."""
    if type(arg) in _PLAIN_CONTAINERS:
        if type(result) not in _PLAIN_CONTAINERS or len(arg) != len(result):
            return result
        if isinstance(result, dict):
            return {k: real_where_real(r, arg.get(k)) for k, r in result.items()} if isinstance(arg, dict) else result
        return type(result)(real_where_real(r, a) for r, a in zip(result, arg))
    if arg is not None and is_complex(result) and not is_complex(arg):
        return real_part(result)
    return result


def integer_dtype(dtype: Any) -> bool:
    """Whether ``dtype`` (a ``dtype=`` argument, ``int``, ``"int32"``, ``np.bool_``) makes integers or
    booleans: a value of that type is piecewise constant, its derivative zero."""
    if dtype is None:
        return False
    try:
        return np.dtype(dtype).kind in "iub"
    except TypeError:
        return False


def object_error(name: str, arg: Any) -> InvalidArgument:
    """A NumPy rule met a user's object: an operator the object defines itself (``a + b`` running
    ``type(a).__add__``), which that rule does not differentiate."""
    kind = type(arg).__name__
    return InvalidArgument(
        f"the gradient rule {name} met a {kind} object: an operator or NumPy function applied to an object of "
        f"your own runs the object's method (such as {kind}.__add__), which the rule of that operator does "
        f"not differentiate. Call a method for it instead (a.add(b)), or apply the operator to the arrays "
        f"the object holds")


def guard_zero(fn: Callable, name: str, rule: Any, position: int) -> Callable:
    """Wrap a vjp so that a zero cotangent gives a zero contribution for free, a
    container result is a cotangent container (whose ``+`` adds, not concatenates),
    and complex values follow docs/complex.md: a rule not marked ``complex_ok``
    refuses a complex result or argument, and a complex contribution to a real
    argument keeps its real part (the imaginary part of the cotangent of a real
    value carries no information)."""

    numpy_rule = (getattr(rule, "module", None) or "").split(".")[0] == "numpy"

    def vjp(g, *args, **kwargs):
        if g is zero:
            return zero
        if kwargs and integer_dtype(kwargs.get("dtype")):  # np.sum(w, dtype=int): an integer result
            return zero
        if not rule.complex_ok and any_complex(args[0] if args else None, args[1:]):
            raise complex_error(f"the gradient rule {name}", "met")
        result = fn(g, *args, **kwargs)
        # The common types are decided by their exact type, without a lookup.
        kind = type(result)
        if kind is float or kind is _FLOAT64:
            return result
        arg = args[position + 1] if position + 1 < len(args) else None
        if numpy_rule and kind is not np.ndarray and is_object(arg):
            raise object_error(name, arg)
        if kind in _PLAIN_CONTAINERS:
            return as_tangent(real_where_real(result, arg))
        if kind is complex or getattr(getattr(result, "dtype", None), "kind", None) == "c":
            if arg is not None and type(arg) not in _PLAIN_CONTAINERS and not is_complex(arg):
                return real_part(result)
        return result

    vjp.__name__ = vjp.__qualname__ = name
    vjp.__doc__ = fn.__doc__
    vjp.__wrapped__ = fn
    vjp.fuse = None
    vjp.add_into = None
    reads = used_parameters(fn)
    # A rule that refuses complex values tells by its arguments (a real-only rule's result is complex only
    # when an argument is); one whose vjp does not read them all must see its result instead. Rules checked
    # for complex values read what they read.
    code = getattr(fn, "__code__", None)
    parameters = code.co_argcount if code is not None and not code.co_flags & inspect.CO_VARARGS else None
    # (``out=`` is where NumPy writes a result, never an input value: a vjp need not read it)
    inputs = range(2, parameters) if parameters is not None else ()
    reads_every_argument = reads is None or parameters is not None and all(
        reads(q) or code.co_varnames[q] == "out" for q in inputs)
    vjp.uses = reads if rule.complex_ok or reads_every_argument else (lambda p: p == 1 or reads(p))
    vjp.position = position
    return vjp


def guard_fuse(fuse: Callable | None, name: str, rule: Any, position: int) -> Callable | None:
    """The batched form of a vjp, with the complex checks of the vjp itself."""
    if fuse is None:
        return None

    def fused(calls):
        if not rule.complex_ok and any(any_complex(args[1], args[2:]) for args, _ in calls):
            raise complex_error(f"the gradient rule {name}", "met")
        result = fuse(calls)
        if result is not None and is_complex(result):
            arg = calls[0][0][position + 2] if position + 2 < len(calls[0][0]) else None
            if arg is not None and type(arg) not in _PLAIN_CONTAINERS and not is_complex(arg):
                return real_part(result)
        return result

    fused.__wrapped__ = fuse
    return fused


def guard_add_into(add_into: Callable | None, name: str, rule: Any) -> Callable | None:
    """The in-place form of a vjp, with the complex check of the vjp itself. (The accumulator makes its
    buffer complex before a complex cotangent is added into it.)"""
    if add_into is None:
        return None

    def added(buffer, g, *args, **kwargs):
        if not rule.complex_ok and any_complex(args[0] if args else None, args[1:]):
            raise complex_error(f"the gradient rule {name}", "met")
        return add_into(buffer, g, *args, **kwargs)

    added.__wrapped__ = add_into
    return added


_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_LOAD_FAST",
          "LOAD_DEREF", "LOAD_CLOSURE", "MAKE_CELL", "LOAD_FAST_BORROW",
          "LOAD_FAST_BORROW_LOAD_FAST_BORROW"}


def used_parameters(fn: Callable) -> Callable[[int], bool] | None:
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


# ---- rules registered by users: checked contributions, one parameter order ------------
def describe(value: Any) -> str:
    if value is None:
        return "None"
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return f"a {dtype} value of shape {np.shape(value)}"
    return f"a {type(value).__name__}"


def is_float_argument(value: Any) -> bool:
    """An argument that can carry a gradient: a float (or float array); integers, bools, strings cannot."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, float):
        return True
    dtype = getattr(value, "dtype", None)
    return dtype is not None and dtype.kind == "f"


def check_contribution(result: Any, arg: Any, where: str) -> Any:
    """``result`` if it is a valid contribution to ``arg`` (same shape, a real dtype); else a clear error.

    Without this check a wrong-shaped contribution would be broadcast silently
    when it is added to the argument's gradient.
    """
    if result is zero:
        return result
    if result is None:
        raise InvalidArgument(f"{where} returned None; return adsrc.zero for an argument with no gradient")
    if is_complex(result):
        raise complex_error(where, "returned")
    if isinstance(arg, (list, tuple)):
        if not isinstance(result, (list, tuple)) or len(result) != len(arg):
            raise InvalidArgument(f"{where} returned {describe(result)} for a {type(arg).__name__} of "
                                  f"{len(arg)} items: it must return one contribution per item, as a list")
        return as_tangent([check_contribution(r, a, f"{where}, item {k}")
                           for k, (r, a) in enumerate(zip(result, arg))])
    if isinstance(arg, dict):
        if not isinstance(result, dict) or set(result) != set(arg):
            raise InvalidArgument(f"{where} returned {describe(result)} for a dict with keys {sorted(arg)}: "
                                  f"it must return a dict with the same keys")
        return as_tangent({k: check_contribution(result[k], arg[k], f"{where}, key {k!r}") for k in arg})
    if not is_float_argument(arg):
        return result  # an integer or other constant argument: it receives no gradient anyway
    if type(result) in _PLAIN_CONTAINERS or isinstance(result, dict):
        raise InvalidArgument(f"{where} returned a {type(result).__name__} for {describe(arg)}")
    dtype = getattr(result, "dtype", None)
    kind = dtype.kind if dtype is not None else ("f" if isinstance(result, (float, int)) else "O")
    if kind not in "fiu" or isinstance(result, bool):
        raise InvalidArgument(f"{where} returned {describe(result)} for {describe(arg)}: a contribution "
                              f"must be a real number or array of numbers, like its argument")
    if np.shape(result) != np.shape(arg):
        raise InvalidArgument(
            f"{where} returned a contribution of shape {np.shape(result)} for an argument of shape "
            f"{np.shape(arg)}: a vjp must return its argument's shape (adsrc.rules.unbroadcast(g, x) sums "
            f"a broadcast cotangent back), so it is not broadcast silently")
    return result


def guard_user(fn: Callable, name: str, position: int, arg_name: str, prim: str) -> Callable:
    """The wrapper of a vjp registered with :func:`register_adjoint`: the checks of
    :func:`guard_zero`, and the contribution's shape and dtype checked against its
    argument, naming the rule. (Built-in rules skip this check: they are tested.)"""
    where = f"the gradient rule registered for {prim} (argument {position}, {arg_name!r}, vjp {name})"

    def vjp(g, ans, *args, **kwargs):
        if g is zero:
            return zero
        result = unthunk(fn(g, ans, *args, **kwargs))
        if is_complex(ans):
            raise complex_error(where, "met")
        arg = args[position] if position < len(args) else None
        if arg is None:
            return as_tangent(result) if type(result) in _PLAIN_CONTAINERS else result
        return check_contribution(result, arg, where)

    reads = used_parameters(fn)
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


def check_order(fn: Callable, label: str) -> None:
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
