"""Arguments in, gradients out: what every entry point of the API does around a compiled derivative.

``positions`` maps ``wrt`` (positions, names, or a tuple or list of them) to
parameter positions; ``bind`` binds a call's arguments in signature order;
``check_differentiable`` refuses what has no gradient (and ndarray subclasses,
whose gradients would be wrong); ``scalar_seed`` refuses a result that is not a
real scalar; ``Fresh`` turns a call's raw gradients into ones shaped, typed and
owned like their arguments, no two sharing memory; ``explain`` annotates an
error raised inside generated code.
"""
from __future__ import annotations

import inspect
import sys
import weakref
from typing import Any, Callable, Sequence, Union

import numpy as np

from ..backend.codegen import explain as explain_generated
from ..errors import InvalidArgument, SourceUnavailable
from ..values import check_real_scalar, leaves, part, seed, unthunk, zero

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


def parameter_names(func: Callable) -> list[str]:
    """The names of a Python function's parameters, in order (none for anything else)."""
    return _signature(func)[1] if inspect.isfunction(func) else []


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
    """Refuse what has no gradient: a non-float at a ``wrt`` position, an ndarray subclass anywhere."""
    names = _signature(func)[1]
    for i, value in enumerate(values):
        kind = type(value)
        if kind is float or kind is np.ndarray and (value.dtype.kind == "f" or i not in wrt):
            continue
        name = names[i] if i < len(names) else f"argument {i}"
        refuse_subclasses(func, name, value, "argument")
        if i in wrt:
            for leaf in leaves(value):
                _check_leaf(name, leaf)


def refuse_subclasses(func: Callable, name: str, value: Any, role: str) -> None:
    """Refuse an ndarray subclass (np.matrix, a masked array, ...) in ``value``, a (nested) argument.

    The rules assume plain arrays: a subclass can give an operator another
    meaning (``*`` of np.matrix is a matrix product) or hide elements (a mask),
    so its gradient would be silently wrong, even where it is not differentiated.
    """
    kind = type(value)
    if kind is np.ndarray or kind is float or kind is int:
        return
    found = _subclass_leaf(value, set())
    if found is None:
        return
    keys, leaf = found
    path = name + "".join(f"[{key!r}]" for key in reversed(keys))
    what = type(leaf).__name__
    remedy = f"pass np.asarray({path}) instead"
    if isinstance(leaf, np.ma.MaskedArray):
        remedy += (f" (np.asarray drops the mask: fill the masked elements first, e.g. "
                   f"{path}.filled(0.0), or apply the mask with np.where inside the function)")
    holds = f"is a {what}" if not keys else f"holds a {what} at {path}"
    raise InvalidArgument(
        f"{getattr(func, '__name__', func)} ({where(func)}): the {role} {name!r} {holds}, a subclass of "
        f"np.ndarray; adsrc differentiates plain NumPy arrays, and a subclass can change what an operation "
        f"means (np.matrix's * is a matrix product) or which elements count (a masked array), so its gradient "
        f"would be wrong; {remedy}")


def _subclass_leaf(tree: Any, seen: set[int]) -> tuple[list, Any] | None:
    """The first ndarray-subclass leaf in a (nested) tuple, list or dict, with its keys innermost first."""
    if isinstance(tree, np.ndarray):
        return None if type(tree) is np.ndarray else ([], tree)
    if isinstance(tree, (list, tuple, dict)):
        if id(tree) in seen:  # a container that holds itself
            return None
        seen.add(id(tree))
        items = tree.items() if isinstance(tree, dict) else enumerate(tree)
        for key, item in items:
            kind = type(item)
            if kind is np.ndarray or kind is float or kind is int:
                continue
            found = _subclass_leaf(item, seen)
            if found is not None:
                found[0].append(key)
                return found
    return None


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


def scalar_seed(value: Any, func: Callable) -> Any:
    """The unit cotangent of ``func``'s result, which must be a real scalar."""
    check_real_scalar(value, func.__name__, where(func))
    return seed(value)


def _owner(array: np.ndarray) -> Any:
    """The object whose memory ``array`` uses: itself if it owns its data, else the end of its base chain."""
    while array.base is not None:
        base = array.base
        if not isinstance(base, np.ndarray):
            return base
        array = base
    return array


class Fresh:
    """Finishes the results of one call so that each returned array is its own.

    No returned array shares memory with another returned array or with an
    input (``trees``: the arguments, tangents, cotangent, the value), even
    when two gradients received the very same contribution: updating one in
    place must leave everything else alone. An array the adjoint computed,
    owns and has not returned yet comes back as it is; any other is copied.
    """

    __slots__ = ("_taken",)

    def __init__(self, *trees: Any):
        # memory owners already spoken for, by id; the objects are kept so that the ids stay theirs
        self._taken: dict[int, Any] = {}
        self._take_inputs(trees, set())

    def _take_inputs(self, tree: Any, seen: set[int]) -> None:
        if type(tree) is tuple and all(type(item) is np.ndarray and item.base is None for item in tree):
            self._taken.update((id(item), item) for item in tree)  # the common call: arrays that own their data
            return
        if isinstance(tree, np.ndarray):
            owner = _owner(tree)
            self._taken[id(owner)] = owner
        elif isinstance(tree, (list, tuple, dict)) and id(tree) not in seen:  # a container may hold itself
            seen.add(id(tree))
            for item in (tree.values() if isinstance(tree, dict) else tree):
                kind = type(item)
                if kind is not float and kind is not int:
                    self._take_inputs(item, seen)

    def _claim(self, array: np.ndarray) -> np.ndarray:
        if not (array.flags.owndata and array.flags.writeable) or id(array) in self._taken:
            array = np.array(array)
        self._taken[id(array)] = array
        return array

    def finish(self, gradient: Any, like: Any) -> Any:
        """A gradient shaped, typed and owned like the argument it belongs to.

        Containers (tuples, lists, dicts, nested) get a gradient of the same
        structure, with zeros where nothing flowed.
        """
        gradient = unthunk(gradient)
        if type(like) is np.ndarray and type(gradient) is np.ndarray and gradient.dtype == like.dtype \
                and gradient.shape == like.shape:
            return self._claim(gradient)
        if isinstance(like, dict):
            return {k: self.finish(part(gradient, k), v) for k, v in like.items()}
        if isinstance(like, (list, tuple)):
            return type(like)(self.finish(part(gradient, i), v) for i, v in enumerate(like))
        if _is_complex(gradient) and not _is_complex(like):
            # The gradient of a real argument is real: the imaginary part of the cotangent of a real
            # value carries nothing (docs/complex.md).
            gradient = np.real(gradient)
        if isinstance(like, np.ndarray):
            if gradient is zero:
                return self._claim(np.zeros_like(like))
            out = np.asarray(gradient, dtype=like.dtype)
            if out.shape != like.shape:
                out = np.broadcast_to(out, like.shape)
            return self._claim(out)
        if isinstance(like, np.generic):
            return like.dtype.type(0) if gradient is zero else like.dtype.type(gradient)
        if type(like) is complex:
            return 0j if gradient is zero else complex(gradient)
        return 0.0 if gradient is zero else float(gradient)


def _is_complex(value: Any) -> bool:
    dtype = getattr(value, "dtype", None)
    return dtype.kind == "c" if isinstance(dtype, np.dtype) else type(value) is complex


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
