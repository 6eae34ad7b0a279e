"""Arguments in, gradients out: what every entry point of the API does around a compiled derivative.

``positions`` maps ``wrt`` (positions, names, or a tuple or list of them) to
parameter positions; ``bind`` binds a call's arguments in signature order;
``check_differentiable`` refuses what has no gradient; ``finish`` turns a raw
gradient into one shaped, typed and owned like its argument; ``explain``
annotates an error raised inside generated code.
"""
from __future__ import annotations

import inspect
import sys
import weakref
from typing import Any, Callable, Sequence, Union

import numpy as np

from ..backend.codegen import explain as explain_generated
from ..errors import InvalidArgument, NonScalarOutput, SourceUnavailable
from ..values import leaves, part, seed, unthunk, zero

Wrt = Union[int, str, Sequence[Union[int, str]]]


def where(func: Callable) -> str:
    """``file:line`` of a function's definition, for messages."""
    code = getattr(func, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else repr(func)


def positions(func: Callable, wrt: Wrt) -> tuple[tuple[int, ...], bool]:
    """Parameter positions for ``wrt``, and whether the caller asked for a tuple."""
    if not inspect.isfunction(func):
        name = getattr(func, "__name__", repr(func))
        raise SourceUnavailable(name, f"it is a {type(func).__name__}, not a Python function")
    names = list(inspect.signature(func, follow_wrapped=False).parameters)
    many = isinstance(wrt, (tuple, list))
    out = []
    for item in (wrt if many else (wrt,)):
        if isinstance(item, bool) or not isinstance(item, (int, str, np.integer)):
            raise InvalidArgument(f"wrt must be an int, a parameter name or a tuple of these, not {item!r}")
        if isinstance(item, str):
            if item not in names:
                raise InvalidArgument(f"{getattr(func, '__name__', func)} has no parameter named {item!r}; "
                                      f"its parameters are {', '.join(names)}")
            item = names.index(item)
        item = int(item)
        if not -len(names) <= item < len(names):
            raise InvalidArgument(f"wrt={item} is out of range: {getattr(func, '__name__', func)} "
                                  f"takes {len(names)} parameters")
        out.append(item % len(names))
    return tuple(out), many


_signatures: "weakref.WeakKeyDictionary[Callable, tuple]" = weakref.WeakKeyDictionary()


def _signature(func: Callable) -> tuple[inspect.Signature, list[str], bool]:
    """The signature, the parameter names, and whether plain positional calls need no binding."""
    defaults = (getattr(func, "__defaults__", None), getattr(func, "__kwdefaults__", None))
    try:
        entry = _signatures[func]
        if entry[3][0] is defaults[0] and entry[3][1] is defaults[1]:  # f.__defaults__ = ... makes a new one
            return entry[:3]
    except (KeyError, TypeError):
        pass
    signature = inspect.signature(func, follow_wrapped=False)
    params = list(signature.parameters.values())
    simple = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    entry = (signature, [p.name for p in params], simple, defaults)
    try:
        _signatures[func] = entry
    except TypeError:
        pass
    return entry[:3]


def bind(func: Callable, args: tuple, kwargs: dict) -> list[Any] | tuple:
    """The call's arguments in signature order, defaults applied."""
    signature, names, simple = _signature(func)
    if simple and not kwargs and len(args) == len(names):
        return args  # the common call: every parameter given, in order
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise InvalidArgument(f"{func.__name__}: {error}") from None
    bound.apply_defaults()
    return list(bound.arguments.values())


def check_differentiable(func: Callable, values: Sequence[Any], wrt: tuple[int, ...]) -> None:
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


def scalar_seed(value: Any, func: Callable) -> Any:
    """The unit cotangent of ``func``'s result, which must be a scalar."""
    if np.ndim(value) != 0:
        raise NonScalarOutput(func.__name__, np.shape(value), where(func))
    return seed(value)


def finish(gradient: Any, like: Any, avoid: tuple) -> Any:
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
        return {k: finish(part(gradient, k), v, avoid) for k, v in like.items()}
    if isinstance(like, (list, tuple)):
        return type(like)(finish(part(gradient, i), v, avoid) for i, v in enumerate(like))
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


def explain(error: BaseException, func: Callable) -> None:
    """Annotate an error from generated code: the original line, and why a recursion overflowed sooner."""
    explain_generated(error)
    if isinstance(error, RecursionError) and not getattr(error, "_adsrc_recursion", False):
        error._adsrc_recursion = True
        error.add_note(
            f"adsrc: the adjoint of {getattr(func, '__name__', func)} ran out of Python stack. Each level of "
            f"recursion in a differentiated function takes a few frames in its adjoint and again in its "
            f"pullback, so it reaches the recursion limit ({sys.getrecursionlimit()}) sooner than the "
            f"function itself; raise sys.setrecursionlimit, or write the recursion as a loop")
