"""Turn autograd's calling convention into adsrc's.

autograd's operators take ``(fun, argnum)`` and are called with ``(*args,
**kwargs)``; adsrc's take ``(func, wrt)``. When every positional argument is
differentiated and there are no keyword arguments, ``fun`` goes to adsrc as
it is. Otherwise ``bind`` writes a small Python function of the
differentiated arguments only, which calls ``fun`` with the others held fixed
(adsrc reads its source like any other function's).
"""
from __future__ import annotations

import functools
import itertools
import keyword
import linecache
import operator
import re
import types
from typing import Any, Callable

_serial = itertools.count()


def _identifier(fun: Callable) -> str:
    name = re.sub(r"\W", "_", getattr(fun, "__name__", "") or type(fun).__name__).strip("_") or "fun"
    name = name if name[0].isalpha() else f"f_{name}"
    return f"{name}_fn" if keyword.iskeyword(name) else name


_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/", operator.mod: "%",
          operator.pow: "**", operator.matmul: "@", operator.floordiv: "//"}


def _hashable(fun: Any) -> bool:
    try:
        hash(fun)
    except TypeError:
        return False
    return True


def _callee(fun: Callable) -> tuple[str, dict[str, Any]]:
    """How the bound wrapper names ``fun``: ``np.sum`` for a NumPy function (so that adsrc finds its rule
    and names it in messages), else a global named after it."""
    import numpy as np
    name = getattr(fun, "__name__", None)
    if name and str(getattr(fun, "__module__", "")).startswith("numpy"):
        for prefix, module in (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft)):
            if getattr(module, name, None) is fun:
                return f"{prefix}.{name}", {"np": np}
    if isinstance(fun, np.ufunc) and getattr(np, fun.__name__, None) is fun:
        return f"np.{fun.__name__}", {"np": np}
    callee = _identifier(fun)
    return callee, {callee: fun}


def bind(fun: Callable, argnum: Any, args: tuple, kwargs: dict) -> tuple[Callable, tuple, Any]:
    """``(g, xs, wrt)``: ``g(*xs)`` is ``fun(*args, **kwargs)`` and ``wrt`` picks autograd's ``argnum`` in it."""
    many = isinstance(argnum, (tuple, list))
    chosen = tuple(argnum) if many else (argnum,)
    if (not kwargs and isinstance(fun, types.FunctionType) and sorted(chosen) == list(range(len(args)))
            and not fun.__code__.co_flags & 0x04):
        return fun, args, (tuple(chosen) if many else argnum)
    name = f"{_identifier(fun)}_bound"
    callee, namespace = _callee(fun)
    call = []
    for i, value in enumerate(args):
        if i in chosen:
            call.append(f"x{i}")
        else:
            namespace[f"c{i}"] = value
            call.append(f"c{i}")
    for key, value in kwargs.items():
        namespace[f"k_{key}"] = value
        call.append(f"{key}=k_{key}")
    parameters = ", ".join(f"x{i}" for i in chosen)
    infix = _INFIX.get(fun) if _hashable(fun) else None
    body = f" {infix} ".join(call) if infix and len(call) == 2 and not kwargs else f"{callee}({', '.join(call)})"
    source = f"def {name}({parameters}):\n    return {body}\n"
    filename = f"<autograd shim {next(_serial)}: {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    wrapper = namespace[name]
    wrapper.__wrapped_autograd_fun__ = fun
    xs = tuple(args[i] for i in chosen)
    wrt = tuple(range(len(chosen))) if many else 0
    return wrapper, xs, wrt


def as_type_error(operator: Callable) -> Callable:
    """Where adsrc refuses a call's arguments, its output or a construct before running it (InvalidArgument,
    NonScalarOutput, UnsupportedSyntax: writing into an argument...), autograd raises TypeError: the refusal
    is re-raised as a class that is both, so ``pytest.raises(TypeError)`` sees it."""
    import adsrc

    @functools.wraps(operator)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return operator(*args, **kwargs)
        except (adsrc.errors.InvalidArgument, adsrc.errors.NonScalarOutput, adsrc.errors.UnsupportedSyntax) as error:
            both = type(f"{type(error).__name__}AsTypeError", (type(error), TypeError), {})
            refusal = both.__new__(both)
            refusal.__dict__.update(error.__dict__)
            refusal.args = error.args
            raise refusal.with_traceback(error.__traceback__) from None
    return run
