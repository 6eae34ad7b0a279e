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

import difflib
import inspect
import sys
import weakref
from typing import Any, Callable, Sequence, Union

import numpy as np

from ..backend.codegen import explain as explain_generated
from ..errors import InvalidArgument, SourceUnavailable
from ..frontend.parse import bound_parts, signature_of
from ..rules.checkpoint import unwrap
from ..rules.closures import lifted_from
from ..values import TangentTuple, check_real_scalar, is_zero, part, seed, unthunk, zero
from ..values.pytrees import children, is_namedtuple, is_object, rebuild, tree_leaves
from ..values.arrays import broadcast_like, is_foreign, is_mutable, namespace

Wrt = Union[int, str, Sequence[Union[int, str]]]


def where(func: Callable) -> str:
    """``file:line`` of a function's definition, for messages (of a lifted local function, its own)."""
    code = getattr(lifted_from(func) or bound_parts(func)[0], "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else repr(func)


def label(func: Callable) -> str:
    """A callable's name, for messages (a partial or callable instance has no ``__name__``)."""
    return getattr(func, "__name__", None) or getattr(bound_parts(func)[0], "__name__", None) or repr(func)


def _refuse_a_jacobian(func: Callable) -> None:
    """A Jacobian or Hessian adsrc made (api/higher.py), given to a reverse-mode API: refused by what it is
    (its order), not as a callable without source."""
    order = getattr(func, "order", None)
    made_there = func.__module__ if inspect.isfunction(func) else type(func).__module__
    if made_there != "adsrc.api.higher" or not isinstance(order, int):
        return  # hvp's function, or a Jacobian's class, is defined there
    root = getattr(func, "root", func)
    place = where(root)
    at = "" if place == repr(root) else f" ({place})"
    named = getattr(func, "label", None)
    named = named if isinstance(named, str) else repr(func)
    raise InvalidArgument(f"differentiating {named}{at} in reverse mode: grad, value_and_grad and vjp take a "
                          f"Python function; take the Jacobian of the Jacobian instead "
                          f"(adsrc.jacobian(adsrc.jacobian(f)), or adsrc.hessian(f) for a scalar f)")


def positions(func: Callable, wrt: Wrt) -> tuple[tuple[int, ...], bool]:
    """Parameter positions for ``wrt``, and whether the caller asked for a tuple.

    For a bound method, partial or callable instance, integers count the arguments
    of the call (``grad(model.loss, wrt=0)`` is ``X`` in ``model.loss(X, y)``) and the
    positions returned count the function's own parameters; a name may be any
    parameter's, ``"self"`` included, to differentiate with respect to the object.
    An integer that counts into ``*args`` is taken by grad, value_and_grad and vjp
    (:func:`positions_and_picks`); anywhere else it is refused.
    """
    found, many, picks = positions_and_picks(func, wrt)
    if any(p is not None for p in picks):
        raise InvalidArgument(f"{label(func)} ({where(func)}) takes *args, and wrt={wrt!r} counts into them: "
                              f"grad, value_and_grad and vjp differentiate with respect to arguments given to "
                              f"*args, this does not; give the function named parameters for them")
    return found, many


def positions_and_picks(func: Callable, wrt: Wrt) -> tuple[tuple[int, ...], bool, tuple[int | None, ...]]:
    """:func:`positions`, where an integer may count the call's positional arguments into ``*args``, as
    JAX's ``argnums`` do: for ``def f(*args)``, ``wrt=1`` is ``args[1]``. Those positions are the ``*args``
    parameter's, and ``picks`` gives, per item of ``wrt``, the index into it (None for a named parameter,
    and for ``wrt`` given by name)."""
    function, prefix, _ = bound_parts(unwrap(func))  # a checkpointed function: its own
    _refuse_a_jacobian(func)
    if not inspect.isfunction(function):
        primitive = _primitive(func)
        if primitive:
            raise SourceUnavailable(label(func), *primitive)
        raise SourceUnavailable(label(func), f"it is a {type(func).__name__}, not a Python function, method, "
                                             f"functools.partial or callable object")
    parameters = list(signature_of(function).parameters.values())
    names = [p.name for p in parameters]
    callable_names = names[len(prefix):]
    starred = next((i for i, p in enumerate(parameters) if p.kind is p.VAR_POSITIONAL), None)
    spread = None if starred is None or starred < len(prefix) else starred - len(prefix)  # *args, in the call
    many = isinstance(wrt, (tuple, list))
    out, picks = [], []
    for item in (wrt if many else (wrt,)):
        if isinstance(item, bool) or not isinstance(item, (int, str, np.integer)):
            raise InvalidArgument(f"wrt must be an int, a parameter name or a tuple of these, not {item!r}")
        if isinstance(item, str):
            if item not in names:
                close = difflib.get_close_matches(item, names, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise InvalidArgument(f"{label(func)} has no parameter named {item!r}; "
                                      f"{hint}its parameters are {', '.join(names)}")
            out.append(names.index(item))
            picks.append(None)
            continue
        item = int(item)
        if spread is not None and item >= spread:  # counts into *args: checked against the call's arguments
            out.append(spread + len(prefix))
            picks.append(item - spread)
            continue
        if not -len(callable_names) <= item < len(callable_names):
            raise InvalidArgument(f"wrt={item} is out of range: {label(func)} "
                                  f"takes {len(callable_names)} parameters")
        out.append(item % len(callable_names) + len(prefix))
        picks.append(None)
    return tuple(out), many, tuple(picks)


def _primitive(func: Callable) -> tuple[str, str, str] | None:
    """For a library function with no gradient rule (``np.argsort`` and the like, given to the API itself):
    SourceUnavailable's reason, where and remedy; None for anything else. (One with a rule never gets
    here: the API differentiates it through a generated caller, primitives.py.)"""
    from .primitives import in_library, is_candidate, spelling

    if not is_candidate(func):
        return None
    wrapped = getattr(func, "pyfunc", None)  # np.vectorize of the user's own function: not a library's
    if inspect.isfunction(wrapped) and not in_library(wrapped):
        return None
    called = spelling(func)
    return (f"{called} is a library function with no gradient rule in adsrc, and no Python source to "
            f"differentiate", "",
            f"register its rule with adsrc.register_adjoint({called}, ...), or differentiate a Python function "
            f"that computes it from functions adsrc has rules for (docs/rules.md lists them)")


def choose_wrt(wrt: Wrt | None, argnums: Wrt | None) -> Wrt:
    """``wrt``, or ``argnums``, its alias (JAX's name): position 0 if neither is given, an error if both are."""
    if wrt is not None and argnums is not None:
        raise InvalidArgument(f"wrt={wrt!r} and argnums={argnums!r}: argnums is another name for wrt; give one")
    chosen = wrt if argnums is None else argnums
    return 0 if chosen is None else chosen


_signatures: "weakref.WeakKeyDictionary[Callable, tuple]" = weakref.WeakKeyDictionary()


def _signature(func: Callable) -> tuple[inspect.Signature, list[str], bool]:
    """The signature, the parameter names, and whether plain positional calls need no binding."""
    keywords = getattr(func, "__kwdefaults__", None)  # a dict, which may be changed in place: its values too
    defaults = (getattr(func, "__defaults__", None), keywords, None if keywords is None else tuple(keywords.values()))
    try:
        entry = _signatures[func]
        if entry[3][0] is defaults[0] and entry[3][1] is keywords \
                and (keywords is None or _same_objects(entry[3][2], defaults[2])):  # f.__defaults__ = ... is new
            return entry[:3]
    except (KeyError, TypeError):
        pass
    signature = signature_of(func)
    params = list(signature.parameters.values())
    simple = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    entry = (signature, [p.name for p in params], simple, defaults)
    try:
        _signatures[func] = entry
    except TypeError:
        pass
    return entry[:3]


def _same_objects(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def parameter_names(func: Callable) -> list[str]:
    """The names of a Python function's parameters, in order (none for anything else)."""
    if not inspect.isfunction(func):
        func = bound_parts(unwrap(func))[0]
    return _signature(func)[1] if inspect.isfunction(func) else []


def bind(func: Callable, args: tuple, kwargs: dict) -> list[Any] | tuple:
    """The call's arguments in signature order, defaults applied (first those a bound method,
    partial or callable instance passes itself)."""
    if not inspect.isfunction(func):
        func = unwrap(func)  # a checkpointed function binds as its function
    if not inspect.isfunction(func):
        function, prefix, keywords = bound_parts(func)
        return bind(function, prefix + tuple(args), {**keywords, **kwargs})
    signature, names, simple = _signature(func)
    if simple and not kwargs and len(args) == len(names):
        return args  # the common call: every parameter given, in order
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as error:
        raise InvalidArgument(f"{label(func)}: {error}") from None
    bound.apply_defaults()
    return list(bound.arguments.values())


class Binding:
    """``bind(func, args, kwargs)`` for the callable it was made for, given at each call, with the common
    call found in a few tests: a plain function given every parameter in order, none by keyword, while
    its code is the one it had. It holds no reference to the function."""

    __slots__ = ("_code", "_count")

    def __init__(self, func: Callable):
        self._code, self._count = None, -1  # -1: no call takes the short way
        if inspect.isfunction(func):
            _, names, simple = _signature(func)
            if simple:
                self._code, self._count = func.__code__, len(names)

    def __call__(self, func: Callable, args: tuple, kwargs: dict) -> list[Any] | tuple:
        if len(args) == self._count and not kwargs and func.__code__ is self._code:
            return args
        return bind(func, args, kwargs)


def star_position(func: Callable) -> int | None:
    """The position of ``func``'s ``*args`` parameter among the values :func:`bind` gives, or None."""
    function, _, _ = bound_parts(unwrap(func)) if not inspect.isfunction(func) else (func, (), {})
    if not inspect.isfunction(function) or not function.__code__.co_flags & inspect.CO_VARARGS:
        return None  # no *args of its own, so no forwarding wrapper either: the common call, without a signature
    kinds = [p.kind for p in signature_of(function).parameters.values()]
    return next((i for i, k in enumerate(kinds) if k is inspect.Parameter.VAR_POSITIONAL), None)


def tangents_by_parameter(func: Callable, tangents: Sequence[Any], values: Sequence[Any]) -> list[Any]:
    """The tangent of each of :func:`bind`'s ``values`` from the tangents of the call's positional
    arguments: those given to ``*args`` make its tuple's tangent; a bound object, a default, zero."""
    bound = len(bound_parts(func)[1]) if not inspect.isfunction(func) else 0
    star = star_position(func)
    out: list[Any] = [zero] * len(values)
    spread: list[Any] = []
    for i, t in enumerate(tangents):
        t = zero if t is None else t
        if star is not None and bound + i >= star:
            spread.append(t)
        elif bound + i < len(out):
            out[bound + i] = t
    if star is not None and star < len(out):
        items = spread + [zero] * (len(values[star]) - len(spread))
        out[star] = zero if all(is_zero(t) for t in items) else TangentTuple(items)
    return out


def check_differentiable(func: Callable, values: Sequence[Any], wrt: tuple[int, ...],
                         picks: Sequence[tuple[int, int]] = ()) -> None:
    """Refuse what has no gradient: a non-float at a ``wrt`` position, an ndarray subclass anywhere.
    ``picks``: ``(position, index)`` of items of a ``*args`` tuple differentiated alone (the tuple's
    position is then not in ``wrt``)."""
    for position, index in picks:
        if index < len(values[position]):
            for leaf in tree_leaves(values[position][index]):
                _check_leaf(f"{parameter_names(func)[position]}[{index}]", leaf)
    names = None
    for i, value in enumerate(values):
        kind = type(value)
        if kind is float or kind is np.ndarray and (value.dtype.kind == "f" or i not in wrt):
            continue
        names = parameter_names(func) if names is None else names  # for messages: only past the common case
        name = names[i] if i < len(names) else f"argument {i}"
        refuse_subclasses(func, name, value, "argument")
        if i in wrt:
            for leaf in tree_leaves(value):
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
    if value is None:  # an empty subtree, as in the pytree functions: its gradient is None
        return
    if isinstance(value, (int, float, complex, np.ndarray, np.generic)):
        dtype = np.result_type(value)
    elif is_foreign(value):  # a Dask or CuPy array: NumPy's functions dispatch to it
        dtype = _foreign_dtype(name, value)
    else:
        raise InvalidArgument(f"cannot differentiate with respect to {name!r}: it holds a "
                              f"{type(value).__name__}; pass floats, float arrays (NumPy, or a library that "
                              f"implements NumPy's dispatch protocols, such as Dask or CuPy), or tuples, lists "
                              f"and dicts of them")
    if dtype.kind in "biu":
        kind = "booleans" if dtype.kind == "b" else "integers"
        raise InvalidArgument(f"cannot differentiate with respect to {name!r}: it holds "
                              f"{kind} ({dtype}), which have no gradient; pass it as floats "
                              f"(e.g. np.asarray(x, float)), or leave it out of wrt")


def _foreign_dtype(name: str, value: Any) -> np.dtype:
    """The NumPy dtype of another library's array, refusing one that names no NumPy dtype."""
    try:
        return np.dtype(value.dtype)
    except TypeError:
        raise InvalidArgument(f"cannot differentiate with respect to {name!r}: it is a {type(value).__name__} "
                              f"of dtype {value.dtype}, which is not a NumPy dtype; adsrc differentiates "
                              f"arrays of real floating dtypes") from None


_ONE = np.float64(1.0)  # a NumPy scalar cannot be changed in place: one serves every call


def scalar_seed(value: Any, func: Callable) -> Any:
    """The unit cotangent of ``func``'s result, which must be a real scalar."""
    kind = type(value)
    if kind is np.float64:  # the common results: nothing to check, no message to name
        return _ONE
    if kind is float:
        return 1.0
    check_real_scalar(value, label(func), where(func))
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
        taken: dict[int, Any] = {}
        self._taken = taken
        seen: set[int] = set()
        for tree in trees:
            kind = type(tree)
            if kind is not tuple and kind is not list:
                if kind is not float and kind is not np.float64:  # a number shares no memory
                    self._take_inputs(tree, seen)
                continue
            seen.add(id(tree))
            for item in tree:  # the arguments: mostly floats, and arrays that own their data
                kind = type(item)
                if kind is np.ndarray and item.base is None:
                    taken[id(item)] = item
                elif kind is not float and kind is not int:
                    self._take_inputs(item, seen)

    def _take_inputs(self, tree: Any, seen: set[int]) -> None:
        if isinstance(tree, np.ndarray):
            owner = _owner(tree)
            self._taken[id(owner)] = owner
        elif is_foreign(tree):
            self._taken[id(tree)] = tree
            base = getattr(tree, "base", None)  # a CuPy view
            if base is not None:
                self._taken[id(base)] = base
        elif isinstance(tree, (list, tuple, dict)) or is_object(tree):
            if id(tree) in seen:  # a container may hold itself
                return
            seen.add(id(tree))
            items = tree.values() if isinstance(tree, dict) else children(tree) if is_object(tree) else tree
            taken = self._taken
            for item in items:
                kind = type(item)
                if kind is np.ndarray:  # a list of arrays: each one's owner, without a call per element
                    owner = item if item.base is None else _owner(item)
                    taken[id(owner)] = owner
                elif kind is not float and kind is not int:
                    self._take_inputs(item, seen)

    def _claim(self, array: np.ndarray) -> np.ndarray:
        flags = array.flags
        if not (flags.owndata and flags.writeable) or id(array) in self._taken:
            array = np.array(array)
        self._taken[id(array)] = array
        return array

    def finish(self, gradient: Any, like: Any) -> Any:
        """A gradient shaped, typed and owned like the argument it belongs to.

        Containers (tuples, lists, dicts, nested) get a gradient of the same
        structure, with zeros where nothing flowed.
        """
        gradient = unthunk(gradient)
        if like is None:
            return None
        if type(like) is np.ndarray and type(gradient) is np.ndarray and gradient.dtype == like.dtype \
                and gradient.shape == like.shape:
            return self._claim(gradient)
        if type(like) is float and (type(gradient) is float or type(gradient) is np.float64):
            return float(gradient)  # the common scalar: as the last line below makes it
        if is_foreign(gradient) or is_foreign(like):
            return self._finish_foreign(gradient, like)
        if is_namedtuple(like) or is_object(like):
            return rebuild(like, gradient, self.finish)
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


    def _finish_foreign(self, gradient: Any, like: Any) -> Any:
        """A gradient that is, or belongs to, an array of another library (Dask, CuPy).

        It stays in that library and is not computed: the gradient of a Dask
        array is a lazy Dask array, and so is the gradient of a NumPy array or
        a float that met a Dask array on the way (NumPy's dispatch rules make
        their combination a Dask array). It gets the argument's shape and, for
        an array argument, its dtype. It is a new object whenever it is an
        input or was returned already (a Dask array too: ``x[i] = v`` rebinds
        one in place), and a mutable array (CuPy) that is a view is copied.
        """
        if gradient is zero:  # then ``like`` is the foreign one
            gradient = namespace(like).zeros_like(like)
        if tuple(np.shape(gradient)) != tuple(np.shape(like)) or not is_foreign(gradient):
            gradient = broadcast_like(gradient, like)  # also brings a NumPy gradient into like's library
        dtype = getattr(like, "dtype", None)
        if dtype is not None and gradient.dtype != dtype:
            gradient = gradient.astype(dtype)
        if id(gradient) in self._taken or is_mutable(gradient) and getattr(gradient, "base", None) is not None:
            gradient = gradient.copy()  # a Dask array's copy is a new object on the same graph: free
        self._taken[id(gradient)] = gradient
        return gradient

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
