"""The public API: grad, value_and_grad, vjp, differentiate, adjoint_source.

A thin layer over the compiler: it maps ``wrt`` (positions, names or a
tuple of them) to parameter positions, binds the call's arguments, picks the
mode (``eager=`` or the context's setting, read at each call), runs the
compiled adjoint and turns its results into gradients shaped like the
arguments: a float for a Python float, an array of the argument's shape and
dtype for an array. Gradients never alias the user's arrays. An error from
the generated code is annotated with the original line; a RecursionError also
says why the adjoint of a recursive function overflows sooner than the function.
"""
from __future__ import annotations

import functools
import inspect
import weakref
import sys
from typing import Any, Callable, Sequence, Union

import numpy as np

from ..backend.codegen import explain
from ..backend.pipeline import Adjoint, get_adjoint
from ..config import resolve_eager
from ..errors import InvalidArgument, NonScalarOutput, SourceUnavailable
from ..values.containers import leaves, part, to_tangent
from ..values.thunks import unthunk, zero

Wrt = Union[int, str, Sequence[Union[int, str]]]


def _positions(func: Callable, wrt: Wrt) -> tuple[tuple[int, ...], bool]:
    """Parameter positions for ``wrt``, and whether the caller asked for a tuple."""
    if not inspect.isfunction(func):
        name = getattr(func, "__name__", repr(func))
        raise SourceUnavailable(name, f"it is a {type(func).__name__}, not a Python function")
    names = list(inspect.signature(func, follow_wrapped=False).parameters)
    many = isinstance(wrt, (tuple, list))
    out = []
    for item in (wrt if many else (wrt,)):
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise InvalidArgument(f"wrt must be an int, a parameter name or a tuple of these, not {item!r}")
        if isinstance(item, str):
            if item not in names:
                raise InvalidArgument(f"{getattr(func, '__name__', func)} has no parameter named {item!r}; "
                                      f"its parameters are {', '.join(names)}")
            item = names.index(item)
        if not -len(names) <= item < len(names):
            raise InvalidArgument(f"wrt={item} is out of range: {getattr(func, '__name__', func)} "
                                  f"takes {len(names)} parameters")
        out.append(item % len(names))
    return tuple(out), many


_signatures: "weakref.WeakKeyDictionary[Callable, tuple]" = weakref.WeakKeyDictionary()


def _signature(func: Callable) -> tuple[inspect.Signature, list[str], bool]:
    """The signature, the parameter names, and whether plain positional calls need no binding."""
    try:
        return _signatures[func]
    except (KeyError, TypeError):
        pass
    signature = inspect.signature(func, follow_wrapped=False)
    params = list(signature.parameters.values())
    simple = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    entry = (signature, [p.name for p in params], simple)
    try:
        _signatures[func] = entry
    except TypeError:
        pass
    return entry


def _bind(func: Callable, args: tuple, kwargs: dict) -> list[Any] | tuple:
    signature, names, simple = _signature(func)
    if simple and not kwargs and len(args) == len(names):
        return args  # the common call: every parameter given, in order
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise InvalidArgument(f"{func.__name__}: {error}") from None
    bound.apply_defaults()
    return list(bound.arguments.values())


def _check_differentiable(func: Callable, values: list[Any], wrt: tuple[int, ...]) -> None:
    names = _signature(func)[1]
    for i in wrt:
        value = values[i]
        if type(value) is np.ndarray and value.dtype.kind == "f" or type(value) is float:
            continue
        for leaf in leaves(value):
            _check_leaf(names[i], leaf)


def _check_leaf(name: str, value: Any) -> None:
    dtype = np.result_type(value) if isinstance(value, (int, float, complex, np.ndarray, np.generic)) else None
    if dtype is None:
        raise InvalidArgument(f"cannot differentiate with respect to {name!r}: it holds a "
                              f"{type(value).__name__}; pass floats, float arrays, or tuples, lists "
                              f"and dicts of them")
    if dtype.kind in "biu":
        kind = "booleans" if dtype.kind == "b" else "integers"
        raise InvalidArgument(f"cannot differentiate with respect to {name!r}: it holds "
                              f"{kind} ({dtype}), which have no gradient; pass it as floats "
                              f"(e.g. np.asarray(x, float)), or leave it out of wrt")
    if dtype.kind == "c":
        raise InvalidArgument(f"cannot differentiate with respect to {name!r}: complex inputs "
                              f"are not supported")


def _finish(gradient: Any, like: Any, avoid: tuple) -> Any:
    """A gradient shaped, typed and owned like the argument it belongs to.

    Containers (tuples, lists, dicts, nested) get a gradient of the same
    structure, with zeros where nothing flowed.
    """
    gradient = unthunk(gradient)
    if type(like) is np.ndarray and type(gradient) is np.ndarray and gradient.dtype == like.dtype \
            and gradient.shape == like.shape and gradient.flags.owndata and gradient.flags.writeable \
            and not any(gradient is a for a in avoid):
        return gradient
    if isinstance(like, dict):
        return {k: _finish(part(gradient, k), v, avoid) for k, v in like.items()}
    if isinstance(like, (list, tuple)):
        return type(like)(_finish(part(gradient, i), v, avoid) for i, v in enumerate(like))
    if isinstance(like, np.ndarray):
        if gradient is zero:
            return np.zeros_like(like)
        out = np.asarray(gradient, dtype=like.dtype)
        if out.shape != like.shape:
            out = np.broadcast_to(out, like.shape)
        if not out.flags.owndata or not out.flags.writeable or any(out is a for a in avoid):
            out = np.array(out)
        return out
    if isinstance(like, np.generic):
        return like.dtype.type(0) if gradient is zero else like.dtype.type(gradient)
    return 0.0 if gradient is zero else float(gradient)


def _adjoint(func: Callable, wrt: tuple[int, ...], eager: bool | None) -> Adjoint:
    return get_adjoint(func, wrt, resolve_eager(eager))


def _explain_recursion(error: Exception, func: Callable) -> None:
    """Say why a function that runs fine on its own may overflow the stack in its adjoint."""
    if isinstance(error, RecursionError) and not getattr(error, "_adsrc_recursion", False):
        error._adsrc_recursion = True
        error.add_note(
            f"adsrc: the adjoint of {getattr(func, '__name__', func)} ran out of Python stack. Each level of "
            f"recursion in a differentiated function takes a few frames in its adjoint and again in its "
            f"pullback, so it reaches the recursion limit ({sys.getrecursionlimit()}) sooner than the "
            f"function itself; raise sys.setrecursionlimit, or write the recursion as a loop")


def _seed(value: Any, func: Callable) -> Any:
    if np.ndim(value) != 0:
        code = func.__code__
        raise NonScalarOutput(func.__name__, np.shape(value), f"{code.co_filename}:{code.co_firstlineno}")
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype.kind == "f":
        return dtype.type(1)
    return 1.0


def value_and_grad(func: Callable, wrt: Wrt = 0, *, eager: bool | None = None) -> Callable[..., tuple[Any, Any]]:
    """A function that returns ``(func(*args), gradient)`` for a scalar-valued ``func``."""
    if getattr(func, "__adsrc_derivative__", None) is not None:  # grad of grad: forward over reverse
        from .higher import value_and_grad_of_derivative

        return value_and_grad_of_derivative(func, wrt)
    positions, many = _positions(func, wrt)

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        values = _bind(func, args, kwargs)
        _check_differentiable(func, values, positions)
        adjoint = _adjoint(func, positions, eager)
        try:
            value, pullback = adjoint.function(*values)
            grads = pullback(_seed(value, func))
        except Exception as error:
            explain(error)
            _explain_recursion(error, func)
            raise
        finished = tuple(_finish(g, values[i], tuple(values)) for g, i in zip(grads, positions))
        return value, (finished if many else finished[0])

    run.__adsrc_derivative__ = ("value_and_grad", func, positions, many)  # what higher.py differentiates again
    return run


def grad(func: Callable, wrt: Wrt = 0, *, eager: bool | None = None) -> Callable[..., Any]:
    """A function that returns the gradient of a scalar-valued ``func`` at its arguments."""
    both = value_and_grad(func, wrt, eager=eager)

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        return both(*args, **kwargs)[1]

    kind, inner, positions, many = both.__adsrc_derivative__
    run.__adsrc_derivative__ = ("grad" if kind == "value_and_grad" else kind, inner, positions, many)
    return run


def vjp(func: Callable, *args: Any, wrt: Wrt = 0, eager: bool | None = None) -> tuple[Any, Callable[[Any], Any]]:
    """``(func(*args), pullback)``; ``pullback(cotangent)`` returns the gradients for ``wrt``.

    The pullback may be called more than once; each call after the first
    re-runs the forward sweep, since a backward sweep consumes its tape.
    """
    positions, many = _positions(func, wrt)
    values = _bind(func, args, {})
    _check_differentiable(func, values, positions)
    adjoint = _adjoint(func, positions, eager)
    try:
        value, first = adjoint.function(*values)
    except RecursionError as error:
        _explain_recursion(error, func)
        raise
    state = {"pullback": first}

    def pullback(cotangent: Any) -> Any:
        backward = state.pop("pullback", None)
        if backward is None:
            backward = adjoint.function(*values)[1]
        if isinstance(value, (list, tuple, dict)):
            cotangent = to_tangent(cotangent)
        elif np.shape(cotangent) != np.shape(value):
            raise InvalidArgument(f"the cotangent has shape {np.shape(cotangent)}, but "
                                  f"{func.__name__} returned shape {np.shape(value)}")
        try:
            grads = backward(cotangent)
        except Exception as error:
            explain(error)
            _explain_recursion(error, func)
            raise
        avoid = tuple(values) + (cotangent,)
        finished = tuple(_finish(g, values[i], avoid) for g, i in zip(grads, positions))
        return finished if many else finished[0]

    return value, pullback


def adjoint_source(func: Callable, wrt: Wrt = 0, *, eager: bool = False, optimize: bool = True) -> str:
    """The generated adjoint module's source, as a string.

    ``optimize=False`` shows the raw output of the reverse pass, before the
    optimizer removes dead code, zero contributions and unread tape entries.
    """
    positions, _ = _positions(func, wrt)
    return get_adjoint(func, positions, bool(eager), bool(optimize)).source


class Differentiated:
    """What ``@adsrc.differentiate`` returns: call it for gradients.

    ``.value_and_grad(*args)`` returns the value too, ``.source`` is the
    generated adjoint's source and ``__wrapped__`` is the original function.
    """

    def __init__(self, func: Callable, wrt: Wrt = 0, eager: bool | None = None):
        functools.update_wrapper(self, func)
        self.wrt = wrt
        self.eager = eager
        self._value_and_grad = value_and_grad(func, wrt, eager=eager)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._value_and_grad(*args, **kwargs)[1]

    def value_and_grad(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return self._value_and_grad(*args, **kwargs)

    @property
    def source(self) -> str:
        eager = resolve_eager(self.eager)
        return adjoint_source(self.__wrapped__, self.wrt, eager=eager)

    def __repr__(self) -> str:
        return f"<adsrc.differentiate of {self.__wrapped__.__name__}, wrt={self.wrt!r}>"


def differentiate(func: Callable | None = None, *, wrt: Wrt = 0, eager: bool | None = None):
    """Decorator: ``@differentiate`` or ``@differentiate(wrt=(0, 1), eager=False)``."""
    if func is None:
        return lambda f: Differentiated(f, wrt, eager)
    return Differentiated(func, wrt, eager)
