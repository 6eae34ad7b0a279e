"""A function with a gradient rule, passed to the API itself: ``grad(np.sin)``, ``jvp(np.exp, ...)``.

adsrc differentiates a function by transforming its Python source, and a
NumPy function or ufunc has none. Every entry point of the API that takes a
function first passes it through :func:`callable_for`: a callable with a
registered rule and no source adsrc reads (a NumPy, SciPy or ``math``
function, a builtin, ``adsrc.fixed_point``) comes back as a small generated Python
function that calls it, with the same name, for instance::

    def norm(x, ord=None, axis=None, keepdims=False):
        return np.linalg.norm(x, ord, axis, keepdims)

so that the same compiler, caches and rules serve ``grad(np.linalg.norm)``
and ``grad(lambda x: np.linalg.norm(x))``. Its parameters are the
primitive's own positional parameters, in order, up to the first one named
``out`` or whose default is not a plain literal (NumPy's ``<no value>``
sentinel): those are left at the primitive's own default. A primitive whose
signature cannot be read gets one parameter per argument its rule names.
The generated source is loaded as adjoints are (backend/codegen.py ``load``).
Anything else (a user's Python function, with a rule or not, a method, a
derivative) comes back as it is.
"""
from __future__ import annotations

import inspect
import math
from typing import Any, Callable

import numpy as np

from ..backend.codegen import load
from ..errors import SourceUnavailable
from ..frontend.parse import in_library
from ..rules import registry

__all__ = ["callable_for", "is_candidate", "spelling"]

_made: dict[Any, Callable] = {}  # by the primitive (or its id, if it cannot be hashed)
_LITERALS = (type(None), bool, int, float, str)


def spelling(func: Callable) -> str:
    """How a program names ``func``: ``np.linalg.norm``, ``math.sin``, ``abs``.

    >>> spelling(np.linalg.norm), spelling(np.tanh), spelling(abs)
    ('np.linalg.norm', 'np.tanh', 'abs')
    """
    name = getattr(func, "__name__", None) or type(func).__name__
    module = getattr(func, "__module__", None) or ""
    root = module.split(".")[0]
    if root == "numpy":
        if getattr(np, name, None) is func:
            return f"np.{name}"
        for sub in ("linalg", "fft", "random"):
            if getattr(getattr(np, sub), name, None) is func:
                return f"np.{sub}.{name}"
        return f"np.{name}"
    if root in ("", "builtins"):
        return name
    return f"{module}.{name}"


def is_candidate(func: Any) -> bool:
    """Whether ``func`` could be a primitive: a callable adsrc does not read the source of (a builtin, a
    ufunc, a Python function of an installed library or of adsrc); not a user's function, method, partial,
    callable instance or derivative, which adsrc differentiates through their source."""
    if inspect.isfunction(func):  # a library's (or adsrc's own) Python function with a rule: its rule
        return in_library(func)
    if inspect.ismethod(func) or inspect.isclass(func):
        return False
    return inspect.isbuiltin(func) or isinstance(func, np.ufunc) or inspect.isroutine(func) \
        or type(func).__name__ in ("_ArrayFunctionDispatcher", "vectorize")


def callable_for(func: Callable) -> Callable:
    """``func``, or for a callable with a gradient rule and no Python source, a Python function calling it.

    >>> import numpy as np
    >>> wrapped = callable_for(np.linalg.norm)
    >>> wrapped.__name__, float(wrapped(np.array([3.0, 4.0])))
    ('norm', 5.0)
    >>> callable_for(len) is len  # no gradient rule: given back, for the API to refuse
    True
    """
    if not is_candidate(func):
        return func
    try:
        key: Any = func
        found = _made.get(key)
    except TypeError:
        key = id(func)
        found = _made.get(key)
    if found is not None:
        return found
    rule = registry.lookup(func)
    if rule is None:
        return func
    made = _generate(func, rule)
    _made[key] = made
    return made


def _parameters(func: Callable, rule: registry.Rule) -> tuple[list[str], list[Any]] | None:
    """The names of the generated function's parameters and the defaults of its last ones, or None when
    the primitive's signature leaves no way to pass the arguments its rule differentiates by position.
    A parameter among those with a sentinel default (np.clip's ``a_min=<no value>``) is required."""
    count = len(rule.vjps)
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        names = [v.__name__[len(rule.name) + 2:] if v is not None else "" for v in rule.vjps]
        names = [n if n.isidentifier() and n not in names[:i] else f"x{i}" for i, n in enumerate(names)]
        return names, []
    names, defaults = [], []
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.name == "out":
            break
        if p.default is not p.empty:
            if type(p.default) in _LITERALS:
                defaults.append(p.default)
            elif len(names) < count and not defaults:  # np.clip's a_min: an argument its rule differentiates
                pass
            else:
                break
        names.append(p.name)
    required = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
                   for p in params)
    if len(names) < max(count, required):
        return None
    return names, defaults


def _generate(func: Callable, rule: registry.Rule) -> Callable:
    called = spelling(func)
    parameters = _parameters(func, rule)
    if parameters is None:
        raise SourceUnavailable(called, "its signature takes the arguments its rule differentiates in a form "
                                        "adsrc cannot pass on by position", "",
                                f"differentiate a Python function (a def or a lambda) that calls {called}")
    names, defaults = parameters
    head = names[:len(names) - len(defaults)] + [f"{n}={d!r}" for n, d in zip(names[len(names) - len(defaults):],
                                                                               defaults)]
    namespace: dict[str, Any] = {"np": np, "math": math}
    target = called
    try:
        reached = eval(called, {"np": np, "math": math}, {})
    except Exception:
        reached = None
    name = called.rsplit(".", 1)[-1]
    name = name if name.isidentifier() and name != "primitive" else "primitive_function"
    if reached is not func or target.split(".")[0] == name:  # abs: the def would rebind the name it calls
        target = "primitive"
        namespace[target] = func
    text = f"def {name}({', '.join(head)}):\n    return {target}({', '.join(names)})\n"
    made = load(text, f"a caller of {called}", namespace, name)
    made.__qualname__ = name
    made.__doc__ = f"Calls {called}: what adsrc differentiates when given {called} itself."
    made.__adsrc_primitive__ = func
    return made
