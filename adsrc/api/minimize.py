"""``minimize``: ``scipy.optimize.minimize`` over a pytree of parameters, with adsrc's gradients.

SciPy minimizes a function of one flat float64 vector. :func:`minimize`
flattens the parameters into one (``_ravel``), hands SciPy a function that
rebuilds them and returns the value and the gradient from one call of
``adsrc.value_and_grad`` (``jac=True``), and for the methods that use second
derivatives, Hessian-vector products from ``adsrc.hvp`` (or, for the methods
that take only a full Hessian, the matrix built from them). SciPy is
imported when ``minimize`` is called, not before.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InvalidArgument, MissingDependency
from .gradients import value_and_grad
from .higher import hvp
from .primitives import callable_for
from .blocks import is_float_leaf
from .ravel import ravel_pytree
from .trees import flatten

__all__ = ["minimize"]

_HESSP = frozenset({"newton-cg", "trust-ncg", "trust-krylov", "trust-constr"})
_HESS = frozenset({"dogleg", "trust-exact"})


def _ravel(tree: Any) -> tuple[np.ndarray, Callable[[np.ndarray], Any]]:
    """``(vector, unravel)``: :func:`ravel_pytree` of ``tree`` with every leaf as float64 (SciPy works
    in float64), after checking that each leaf is a real float; ``unravel`` gives float leaves as floats
    and arrays in their shapes, new arrays each time."""
    leaves, unflatten = flatten(tree)
    for leaf in leaves:
        if not is_float_leaf(leaf) or np.iscomplexobj(leaf):
            raise InvalidArgument(f"minimize optimizes real floating-point parameters, and a leaf of params is a "
                                  f"{type(leaf).__name__} of dtype {np.result_type(leaf)}; pass floats or float "
                                  f"arrays (np.asarray(x, float)), and the rest through args")
    as64 = unflatten([leaf if isinstance(leaf, float) else np.asarray(leaf, dtype=np.float64) for leaf in leaves])
    vector, unravel_tree = ravel_pytree(as64)

    def unravel(flat: np.ndarray) -> Any:
        return unravel_tree(np.array(flat, dtype=np.float64))

    return vector, unravel


def _flat_like(tree: Any, like: Any, what: str) -> np.ndarray:
    """A tree of ``like``'s structure (a gradient, a bound) as a flat float64 vector, a number broadcast
    to each leaf's shape; None (no bound) as NaN."""
    leaves, given = flatten(like)[0], flatten(tree)[0]
    if len(given) != len(leaves):
        raise InvalidArgument(f"minimize: {what} has {len(given)} leaves, and params {len(leaves)}; give it "
                              f"params' structure (or, for bounds, SciPy's flat form: scipy.optimize.Bounds "
                              f"or a list of (low, high) pairs)")
    parts = []
    for value, leaf in zip(given, leaves):
        value = np.nan if value is None else value
        parts.append(np.ravel(np.broadcast_to(np.asarray(value, dtype=np.float64), np.shape(leaf))))
    return np.concatenate(parts) if parts else np.zeros(0)


def _bounds(bounds: Any, params: Any, optimize: Any) -> Any:
    """SciPy's bounds from ``bounds``: a tuple ``(lower, upper)`` of trees of params' structure, or SciPy's
    own forms (a ``Bounds``, a list of ``(low, high)`` pairs), passed on as they are."""
    if bounds is None or isinstance(bounds, optimize.Bounds) or isinstance(bounds, list):
        return bounds
    if not isinstance(bounds, tuple) or len(bounds) != 2:
        raise InvalidArgument("minimize: bounds is a tuple (lower, upper) of values of params' structure (None "
                              "for no bound), a scipy.optimize.Bounds, or a list of (low, high) pairs, one per "
                              f"element of the flattened params; not a {type(bounds).__name__}")
    lower, upper = (_flat_like(b, params, f"bounds[{i}]") for i, b in enumerate(bounds))
    return optimize.Bounds(np.where(np.isnan(lower), -np.inf, lower), np.where(np.isnan(upper), np.inf, upper))


def minimize(fun: Callable[..., Any], params: Any, args: Sequence[Any] = (), *, method: str = "BFGS",
             bounds: Any = None, constraints: Any = (), tol: float | None = None,
             callback: Callable[[Any], Any] | None = None, options: dict | None = None,
             hessian: bool = True, eager: bool | None = None) -> Any:
    """Minimize ``fun(params, *args)`` over ``params`` with ``scipy.optimize.minimize`` and adsrc's gradients.

    ``params`` is a float, an array, or a pytree of them (tuples, lists,
    dicts, NamedTuples, dataclasses); ``fun`` returns a real scalar, and
    ``args`` are passed after ``params`` and not differentiated. Each
    evaluation SciPy asks for is one call of ``adsrc.value_and_grad(fun)``,
    which gives the value and the gradient together. With ``hessian=True``
    (the default), the methods that use Hessian-vector products
    (Newton-CG, trust-ncg, trust-krylov, trust-constr) get ``hessp``
    from ``adsrc.hvp``, and those that need the matrix (dogleg,
    trust-exact) get ``hess``, built from one hvp per parameter.
    ``method``, ``constraints``, ``tol`` and ``options`` are SciPy's.

    ``bounds``: a tuple ``(lower, upper)`` of values of params' structure,
    each leaf a number (for every element) or an array of its leaf's
    shape, None for no bound; or SciPy's flat forms, a
    ``scipy.optimize.Bounds`` or a list of ``(low, high)`` pairs, one per
    element of the flattened parameters (leaves in order, each in C
    order). ``callback(params)`` is called after each iteration with the
    parameters in their structure.

    SciPy works in float64: every leaf, float32 included, is optimized and
    returned in float64, and ``fun`` is called with float64 leaves.

    Returns SciPy's ``OptimizeResult``, whose ``x`` holds the parameters
    in params' structure and ``jac`` the last gradient in it; ``x_flat``
    and ``jac_flat`` are SciPy's flat vectors, ``ncalls`` the number of
    calls of ``value_and_grad`` (each one evaluation, ``nfev``) and
    ``nhvp`` that of Hessian-vector products. Needs SciPy
    (``pip install "adsrc[scipy]"``).

    >>> import numpy as np, adsrc
    >>> def loss(p, target):
    ...     return np.sum((p["w"] - target) ** 2) + (p["b"] - 1.0) ** 2
    >>> result = adsrc.minimize(loss, {"w": np.zeros(2), "b": 0.0}, args=(np.array([3.0, -1.0]),))
    >>> result.success, np.round(result.x["w"], 6).tolist(), round(result.x["b"], 6)
    (True, [3.0, -1.0], 1.0)
    """
    try:
        from scipy import optimize
    except ImportError:
        raise MissingDependency('adsrc.minimize calls scipy.optimize.minimize, and SciPy is not installed: '
                                'pip install "adsrc[scipy]" (or pip install scipy)') from None
    if not isinstance(args, (tuple, list)):
        raise InvalidArgument(f"minimize: args is the tuple of fun's other arguments, not a {type(args).__name__} "
                              f"(write (x,) for one)")
    fun = callable_for(fun)
    args = tuple(args)
    x0, unravel = _ravel(params)
    both = value_and_grad(fun, eager=eager)
    counts = {"calls": 0, "hvp": 0}

    def value_and_gradient(flat: np.ndarray) -> tuple[float, np.ndarray]:
        counts["calls"] += 1
        value, gradient = both(unravel(flat), *args)
        return float(value), _flat_like(gradient, params, "the gradient")

    extra: dict[str, Any] = {}
    name = method.lower() if isinstance(method, str) else ""
    if hessian and name in _HESSP | _HESS:
        product = hvp(fun)

        def hessp(flat: np.ndarray, v: np.ndarray) -> np.ndarray:
            counts["hvp"] += 1
            return _flat_like(product(unravel(flat), *args, unravel(v)), params, "the Hessian-vector product")

        if name in _HESSP:
            extra["hessp"] = hessp
        else:
            extra["hess"] = lambda flat: np.stack([hessp(flat, e) for e in np.eye(flat.size)], axis=1)
    if callback is not None:
        extra["callback"] = lambda xk, *rest: callback(unravel(xk))
    result = optimize.minimize(value_and_gradient, x0, method=method, jac=True,
                               bounds=_bounds(bounds, params, optimize), constraints=constraints, tol=tol,
                               options=options, **extra)
    result.x_flat = result.x
    result.x = unravel(result.x)
    if getattr(result, "jac", None) is not None and np.shape(result.jac) == np.shape(x0):
        result.jac_flat = np.asarray(result.jac)
        result.jac = unravel(result.jac_flat)
    result.ncalls, result.nhvp = counts["calls"], counts["hvp"]
    return result
