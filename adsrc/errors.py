"""Errors raised by adsrc.

Every error a user can see subclasses :class:`AdsrcError`, so one ``except``
clause catches them all. Messages name the original ``file:line`` so that a
user can find the offending code without reading the generated adjoint.

>>> import numpy as np, adsrc
>>> def f(x):
...     return x * 2.0
>>> try:
...     adsrc.grad(f)(np.array([1.0, 2.0]))
... except adsrc.errors.NonScalarOutput as error:
...     print(type(error).__name__, isinstance(error, adsrc.AdsrcError))
NonScalarOutput True
"""
from __future__ import annotations


class AdsrcError(Exception):
    """Base class of every error adsrc raises on purpose.

    >>> import adsrc
    >>> def f(n):
    ...     return n * n
    >>> try:
    ...     adsrc.grad(f)(3)
    ... except adsrc.AdsrcError as error:
    ...     print(type(error).__name__)
    InvalidArgument
    """


class UnsupportedSyntax(AdsrcError):
    """A construct the compiler cannot differentiate.

    Raised before any code runs, with the construct's name and its original
    ``file:line:col``.
    """

    def __init__(self, construct: str, where: str, hint: str = ""):
        self.construct = construct
        self.where = where
        self.hint = hint
        message = f"{where}: {construct} is not supported by adsrc"
        if hint:
            message += f"; {hint}"
        super().__init__(message)


class RefusedWhenRun(UnsupportedSyntax):
    """A construct whose meaning depends on a value, refused when its statement runs.

    Two checks cannot be made before the function runs, because only the
    value decides: ``x op= e`` where ``x`` turns out to be an array that
    another name shares (Python would change it in place), and a
    differentiated loop over something that turns out not to be a sequence
    (a dict). They run right before the statement, so it changes nothing;
    everything else is refused before any code runs.

    Checkpointing (docs/checkpointing.md) adds a check made in the backward
    sweep: a checkpointed function or loop whose recomputation does not give
    the value the forward sweep computed is refused there, before its
    gradient is returned.
    """


class NoGradientRule(AdsrcError):
    """A call to a function that has no adjoint rule and no Python source."""

    def __init__(self, name: str, where: str, remedy: str = "", instead: str = ""):
        name = _as_written(name, where)
        self.name = name
        self.where = where
        if instead:  # what to write instead, where registering a rule is not the remedy
            super().__init__(f"{where}: no gradient rule for {name}; {instead}")
            return
        if remedy:
            super().__init__(f"{where}: no gradient rule for {name}; register one with {remedy}")
            return
        super().__init__(f"{where}: no gradient rule for {name}; {_no_rule_remedy(name)}")


_MAKER = "local_function("


def _as_written(name: str, where: str) -> str:
    """``name``, the source of a called expression as the compiler holds it, with each local function it
    makes (``local_function(lambda_code, (), None)``, frontend/closures.py) written as the user wrote it:
    the lambdas of the statement at ``where`` (``file:line:col``), in order, and a def's own name."""
    if _MAKER not in name:
        return name
    lambdas = iter(_lambdas_at(where))
    out, at = [], 0
    while (start := name.find(_MAKER, at)) >= 0:
        depth, end = 0, start + len(_MAKER) - 1
        for end in range(end, len(name)):
            depth += {"(": 1, ")": -1}.get(name[end], 0)
            if depth == 0:
                break
        code = name[start + len(_MAKER):].split(",", 1)[0].strip()
        made = code.rsplit("_code", 1)[0]
        out += [name[at:start], next(lambdas, "lambda ...") if made == "lambda" else made]
        at = end + 1
    return "".join(out) + name[at:]


def _lambdas_at(where: str) -> list[str]:
    """The source text of each lambda in the statement at ``where``, in order ([] if it cannot be read)."""
    import ast
    import linecache
    import textwrap

    parts = where.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return []
    lines = linecache.getlines(parts[0])[int(parts[1]) - 1:]
    for count in range(1, min(len(lines), 50) + 1):
        text = textwrap.dedent("".join(lines[:count]))
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        found = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Lambda)),
                       key=lambda n: (n.lineno, n.col_offset))
        return [" ".join((ast.get_source_segment(text, n) or "lambda ...").split()) for n in found]
    return []


# Builtins that make iterators: differentiated where a loop or comprehension consumes them.
_ITERATORS = frozenset({"zip", "enumerate", "reversed", "map", "filter", "iter"})
# functools' callables the front end writes out as the calls or loops they make, in the forms it names
_WRITTEN_OUT = {
    "partial": "a partial is differentiated where it is bound once to a name and only called "
               "(`g = functools.partial(f, a, k=v)`, then `g(x)`: frontend/partials.py); one passed on, kept "
               "in a container or bound twice is an object: call f itself, or pass `lambda x: f(a, x, k=v)`",
    "reduce": "functools.reduce(f, xs[, initial]) is differentiated as the loop it runs where f is a "
              "two-parameter lambda, a local function or a function of yours (frontend/folds.py); "
              "otherwise write the loop `value = initial; for item in xs: value = f(value, item)`",
}


def _no_rule_remedy(name: str) -> str:
    """What a user can do about a call of ``name`` (the source of the called expression) with no rule."""
    module, _, last = name.rpartition(".")
    if module in ("", "functools") and last in _WRITTEN_OUT:
        return _WRITTEN_OUT[last]
    if name in _ITERATORS:
        return (f"{name}(...) is differentiated where a for loop or a comprehension consumes it "
                f"(`for a, b in zip(xs, ys)`, `[v for v in reversed(xs)]`, `list({name}(...))`), "
                f"so write the loop or the comprehension instead of keeping the iterator")
    if name.startswith("the attribute ."):
        return ("adsrc differentiates an array's .T, .mT, .real and .imag (and .shape and the like carry no "
                "gradient), and the attributes of objects, dataclasses and NamedTuples (docs/objects.md); "
                "for other fields, pass them in a dict or a tuple and index it (params['w'])")
    if "(" in name or "[" in name:
        return (f"adsrc finds a rule by the function it names before the function runs, and {name} makes a "
                f"new function each time; bind it once at module level (`f = {name}`), call f(...), and "
                f"register its adjoint with adsrc.register_adjoint(f, vjp) (see docs/rules.md)")
    return (f"register one with @adsrc.register_adjoint({name}) (see docs/rules.md), or mark it "
            f"with adsrc.register_nondifferentiable({name}) if its gradient is zero")


class UndefinedName(AdsrcError, NameError):
    """A name the function reads that is defined nowhere: not a local, a closure cell, a global or a builtin.

    Python would raise NameError when the line ran; adsrc raises it (this
    class is a NameError too) before any code runs, naming the line.
    """

    def __init__(self, name: str, where: str, suggestion: str = ""):
        self.name = name
        self.where = where
        hint = f"; did you mean {suggestion!r}?" if suggestion else ""
        super().__init__(f"{where}: name {name!r} is not defined{hint}")


class NonScalarOutput(AdsrcError):
    """grad was asked for the gradient of a function whose value is not a real scalar.

    ``returned`` says what it returned instead when that is not a matter of
    shape (``"a str"``, ``"a bool"``, ``"a complex128"``, ``"None"``), and
    ``remedy`` what to do about it.
    """

    def __init__(self, name: str, shape: tuple, where: str = "", returned: str = "", remedy: str = ""):
        self.shape = shape
        self.returned = returned
        place = f"{where}: " if where else ""
        if returned:
            message = (f"{place}{name} returned {returned}; grad needs a real scalar output "
                       f"(a float, or a 0-d float array)")
            if remedy:
                message += f": {remedy}"
            super().__init__(message)
            return
        super().__init__(
            f"{place}{name} returned a value of shape {shape}; grad needs a scalar output. "
            f"Use adsrc.vjp({name}, *args) and call the pullback with a cotangent "
            f"of that shape instead"
        )


class SourceUnavailable(AdsrcError):
    """The function's Python source cannot be read (a builtin, a REPL function, ...)."""

    def __init__(self, name: str, reason: str, where: str = "", remedy: str = ""):
        place = f"{where}: " if where else ""
        remedy = remedy or ("adsrc transforms Python source, so define the function in a file (or register an "
                            "adjoint rule for it with adsrc.register_adjoint)")
        super().__init__(f"{place}cannot read the source of {name}: {reason}. {remedy}")


class InvalidArgument(AdsrcError, ValueError):
    """Bad arguments to the public API (an unknown wrt name, an integer input, ...)."""


class NotDifferentiable(AdsrcError, NotImplementedError):
    """A derivative adsrc does not compute: a rule's option it does not cover (``np.pad`` with
    ``mode="mean"``), a construct forward mode or second order cannot go through, an order past the
    ones supported. The message says which, and what to do instead where there is a way.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return np.sum(np.pad(x, 1, mode="median"))
    >>> try:
    ...     adsrc.grad(f)(np.ones(3))
    ... except adsrc.errors.NotDifferentiable as error:
    ...     print(isinstance(error, adsrc.AdsrcError), isinstance(error, NotImplementedError))
    True True
    """


class NotConverged(AdsrcError, RuntimeError):
    """An iteration (``adsrc.fixed_point``, or the linear solve of its derivative) reached its most
    iterations without converging; it never returns an unconverged result.

    >>> import adsrc
    >>> def diverging(a, x):
    ...     return 2.0 * x + a
    >>> try:
    ...     adsrc.fixed_point(diverging, 1.0, 1.0, max_iter=20)
    ... except adsrc.errors.NotConverged as error:
    ...     print(isinstance(error, RuntimeError))
    True
    """


class MissingDependency(AdsrcError, ImportError):
    """An optional library a function needs is not installed (SciPy for ``adsrc.minimize``); the message
    names the ``pip install`` command that adds it."""


# What is still refused of order 3 and more (the API's own derivatives compose to any order).
BEYOND_A_CALL = ("adsrc differentiates the derivatives its API makes to any order (grad(grad(grad(f))), "
                 "jacobian(hessian(f)), hessian(hessian(f)), hvp(f) in its point), and grad(f), jvp(f, ...) "
                 "(of a module-level f, without has_aux) and jvp(grad(f), ...) called inside a function to order 3, "
                 "but not yet a higher order reached through a call inside a differentiated function, nor these")
