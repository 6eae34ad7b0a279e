"""Every rule at the singular points of its formula: zeros, ties, domain boundaries, singular matrices.

1. Generated from the registry: every sample of tests/rule_samples.py is moved to
   degenerate points, every float argument set to 0, to 1, or to integers in
   {-1, 0, 1} (which makes zeros, ties, zero spread, singular and repeated-
   eigenvalue matrices, and the boundaries of arcsin, arccosh, sqrt...). Where
   Python's value is finite there, each vjp and jvp is compared, element by
   element, with one-sided finite differences on both sides:

   * where they agree (the function is differentiable there), the rule must
     match them;
   * where they disagree (a kink: abs at 0, a tie in max or sort, std at zero
     spread), the rule must return a finite value: the documented subgradient,
     checked exactly in part 2, never NaN;
   * where one side is undefined or unbounded (sqrt at 0, arcsin at 1), the
     rule may return an infinite derivative but never NaN;
   * a rule may refuse with a clear adsrc error (eigh's eigenvectors at a
     repeated eigenvalue), never with another exception.

2. The documented values at named points (docs/rules.md, "Singular points"),
   checked exactly in both modes: power with exponent 0, 1 and 2 at base 0,
   sqrt, abs and log at 0, std, var and norms at zero spread, ties in
   maximum/max/sort, cumprod and prod with zeros, det and inv at singular
   matrices...

3. The same points through adsrc.grad and adsrc.jvp (polynomials at 0, masked
   branches, argsort with ties), and the rules that used to be registered as
   non-differentiable although an argument carries a gradient.
"""
from __future__ import annotations

import math
import warnings
import zlib

import numpy as np
import pytest

import adsrc
import adsrc.rules as builtin
from adsrc.errors import AdsrcError, InvalidArgument
from adsrc.values.containers import add_tangents
from adsrc.values.thunks import zero
from rule_samples import ROUNDED, SAMPLES, C, arr, flt
from library_samples import EDGES_OF_SUPPORT
from test_forward import check_jvp, lower_precision, random_direction, tangent_leaves
from test_rules import (call_vjp, check_against_fd, cotangent, flat, is_float_like, positions, result_leaves,
                        working_leaves)

RULES = {rule.qualname: rule for rule in builtin.builtin_rules()}
H = 1e-7
SMOOTH = 1e-4      # one-sided differences closer than this (relative) mean: differentiable here
UNBOUNDED = 1e4    # a one-sided difference larger than this: the derivative is infinite here
# Rules that share a cotangent evenly among tied values. At a tie, moving one value alone may change
# nothing either way (the median of equal values) although moving them together does: the partial
# derivatives agree, yet the function is not differentiable there. Their share is checked in part 2.
TIE_SHARING = {f"numpy.{n}" for n in ("median", "quantile", "percentile", "nanmedian", "nanquantile",
                                      "nanpercentile")}


# ---- 1. generated: every sample at degenerate points ---------------------------------------
def _degenerate(value, variant, rng):
    """``value`` with every float (array, scalar, in lists and tuples) moved to a degenerate point."""
    if isinstance(value, list):
        return [_degenerate(v, variant, rng) for v in value]
    if isinstance(value, tuple):
        return tuple(_degenerate(v, variant, rng) for v in value)
    if isinstance(value, (bool, np.bool_)) or not is_float_like(value):
        return value
    shape = np.shape(value)
    if variant == "zeros":
        new = np.zeros(shape)
    elif variant == "ones":
        new = np.ones(shape)
    else:
        new = rng.integers(-1, 2, shape).astype(float)
    if isinstance(value, np.ndarray):
        return new.astype(value.dtype)
    if isinstance(value, np.floating):
        return type(value)(new)
    return float(new)


def _quiet(f, *args, **kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


def _finite_value(ans) -> bool:
    leaves = [leaf for leaf in flat(ans) if leaf is not None]
    return bool(leaves) and all(np.all(np.isfinite(leaf)) for leaf in leaves)


def _draw(name, i, variant):
    rng = np.random.default_rng(zlib.crc32(f"singular{name}{i}{variant}".encode()))
    args, kwargs = SAMPLES[name][i].draw(rng)
    return _degenerate(args, variant, rng), kwargs, rng


def _cases():
    out = []
    for name, rule in RULES.items():
        for i, case in enumerate(SAMPLES.get(name, [])):
            for variant in ("zeros", "ones", "ints"):
                args, kwargs, _ = _draw(name, i, variant)
                try:
                    ans = _quiet(rule.func, *args, **kwargs)
                except Exception:  # Python refuses this point (inv of a singular matrix): nothing to check
                    continue
                if _finite_value(ans) and positions(rule.vjps, case, args):
                    out.append(pytest.param(name, i, variant, id=f"{name}[{i}]-{variant}"))
    return out


SINGULAR_CASES = _cases()


def _outputs(f, args, kwargs, base):
    """The output leaves of ``f(*args, **kwargs)``, or None where the point is outside the domain
    (an exception, a non-finite value, or an output of another shape)."""
    try:
        out = flat(_quiet(f, *args, **kwargs))
    except Exception:
        return None
    if len(out) != len(base):
        return None
    for a, b in zip(out, base):
        if (a is None) != (b is None) or (a is not None and (a.shape != b.shape or not np.all(np.isfinite(a)))):
            return None
        if a is not None and a.dtype.kind == "c" and b.dtype.kind != "c":
            return None  # a real function that turned complex (Python's (-1.0) ** 0.5): outside its real domain
    return out


def _one_sided(at, base, sign):
    """The one-sided derivative of every output element in direction ``sign`` (a list of arrays, one per
    output leaf), or None where it does not exist: outside the domain, or not converging (a step 100 times
    smaller changes it: an infinite or logarithmic slope, or a jump)."""
    estimates = []
    for step in (H, H / 100):
        moved = at(sign * step)
        if moved is None:
            return None
        estimates.append([None if a is None else sign * (a - b) / step for a, b in zip(moved, base)])
    out = []
    for coarse, fine in zip(*estimates):
        if coarse is None:
            out.append(None)
            continue
        converged = np.abs(coarse - fine) <= 1e-3 * (1 + np.abs(fine)) + 1e-6 * np.max(np.abs(fine), initial=0)
        out.append(np.where(converged & (np.abs(fine) < UNBOUNDED), fine, np.nan))
    return out


def _classify(plus, minus):
    """'smooth', 'kink', 'boundary' (one side undefined or unbounded) or 'undefined' (both).

    ``plus`` and ``minus`` are the one-sided derivatives of every output element (NaN where undefined).
    """
    ok_plus, ok_minus = plus is not None and np.all(np.isfinite(plus)), minus is not None and np.all(np.isfinite(minus))
    if ok_plus and ok_minus:
        scale = 1 + max(np.max(np.abs(plus), initial=0), np.max(np.abs(minus), initial=0))
        return "smooth" if np.max(np.abs(plus - minus), initial=0) <= SMOOTH * scale else "kink"
    if ok_plus or ok_minus:
        return "boundary"
    return "undefined"


def _check_element(got, kind, plus, minus, where, rtol=1e-4):
    """``got``, the rule's value for one element; ``plus``/``minus`` its one-sided values (None: undefined);
    ``rtol``: looser for a value given in a lower precision (the tangent of np.float16(x))."""
    if kind == "smooth":
        central = 0.5 * (plus + minus)
        assert abs(got - central) <= rtol * (1 + abs(central)), f"{where}: {got} != {central} (differentiable here)"
    elif kind == "kink":
        assert np.isfinite(got), f"{where}: {got} at a kink (one-sided {minus}, {plus}): the subgradient must be finite"
    elif kind == "boundary":
        assert not np.isnan(got), f"{where}: NaN at a domain boundary (one-sided {minus}, {plus})"
        side = plus if plus is not None else minus
        if abs(side) < 10:  # a bounded one-sided derivative: the rule gives it
            assert abs(got - side) <= 1e-2 * (1 + abs(side)), f"{where}: {got} != one-sided {side}"


def _dot(g_leaves, diffs):
    if diffs is None:
        return None
    total = 0.0
    for gl, d in zip(g_leaves, diffs):
        if gl is not None and d is not None:
            total += float(np.real(np.sum(gl * d)))  # the transpose pairing (docs/complex.md)
    return total if np.isfinite(total) else None


@pytest.mark.parametrize("name,i,variant", SINGULAR_CASES)
def test_vjp_at_degenerate_points(name, i, variant):
    rule = RULES[name]
    func = ROUNDED.get(name, rule.func)  # a cast that rounds: checked on the one that does not
    args, kwargs, rng = _draw(name, i, variant)
    ans = _quiet(func, *args, **kwargs)
    base = flat(ans)
    g = cotangent(ans, rng)
    g_leaves = flat(g)
    for p in positions(rule.vjps, SAMPLES[name][i], args):
        try:
            result = _quiet(call_vjp, rule.vjps[p], g, ans, args, kwargs)
        except AdsrcError:
            continue  # a clear refusal
        got = result_leaves(result, args[p])
        leaves, rebuild = working_leaves(args[p])
        for k, leaf in enumerate(leaves):
            # a complex element moves along its real axis, whose pairing is Re(vjp), and its imaginary
            # axis, whose pairing is -Im(vjp) (docs/complex.md)
            units = ((1.0, np.real), (1j, lambda v: -np.imag(v))) if leaf.dtype.kind == "c" else ((1.0, np.real),)
            for j in range(leaf.size):
                old = leaf.flat[j]
                for unit, component in units:

                    def at(step):
                        leaf.flat[j] = old + step * unit
                        try:
                            return _outputs(func, (*args[:p], rebuild(leaves), *args[p + 1:]), kwargs, base)
                        finally:
                            leaf.flat[j] = old

                    columns = [_one_sided(at, base, sign) for sign in (1.0, -1.0)]
                    kind = _classify(*[None if c is None else np.concatenate([np.ravel(x) for x in c if x is not None])
                                       for c in columns])
                    if kind == "smooth" and name in TIE_SHARING and np.sum(leaf == leaf.flat[j]) > 1:
                        kind = "kink"
                    plus, minus = (None if c is None else _dot(g_leaves, c) for c in columns)
                    _check_element(float(component(np.asarray(got[k]).flat[j])), kind, plus, minus,
                                   f"{name}[{i}] at {variant}: vjp of argument {p}, leaf {k}, element {j}")


@pytest.mark.parametrize("name,i,variant", SINGULAR_CASES)
def test_jvp_at_degenerate_points(name, i, variant):
    rule = RULES[name]
    func = ROUNDED.get(name, rule.func)  # a cast that rounds: checked on the one that does not
    args, kwargs, rng = _draw(name, i, variant)
    ans = _quiet(func, *args, **kwargs)
    base = flat(ans)
    moved = positions(rule.vjps, SAMPLES[name][i], args)
    directions = {p: random_direction(args[p], rng) for p in moved}
    total = zero
    try:
        for p in moved:
            total = add_tangents(total, _quiet(rule.jvps[p], directions[p], ans, *args, **kwargs))
    except AdsrcError:
        return
    got = tangent_leaves(total, ans)

    def along(step):
        shifted_args = list(args)
        for p in moved:
            leaves, rebuild = working_leaves(args[p])
            d_leaves = flat(directions[p]) if isinstance(args[p], (list, tuple)) else [np.asarray(directions[p])]
            shifted_args[p] = rebuild([leaf + step * np.asarray(d, dtype=leaf.dtype) for leaf, d in zip(leaves, d_leaves)])
        return _outputs(func, shifted_args, kwargs, base)

    if (name, i, variant) in EDGES_OF_SUPPORT:  # no derivative exists there: the rule must not give NaN
        assert not any(np.isnan(t).any() for t in got if t is not None), f"{name}[{i}] at {variant}: NaN"
        return
    plus, minus = _one_sided(along, base, 1.0), _one_sided(along, base, -1.0)
    if name == "numpy.linalg.eigh":
        # An eigenvector is defined up to its sign, which LAPACK may flip between neighbouring matrices:
        # where one element of an eigenvector jumps, the whole eigenvector has no derivative.
        for side in (plus, minus):
            if side is not None:
                side[1] = np.where(np.all(np.isfinite(side[1]), axis=-2, keepdims=True), side[1], np.nan)
    if name in ("numpy.linalg.svd", "numpy.linalg.qr") and isinstance(ans, tuple):
        # The same for singular vectors (U's columns with Vh's rows) and for Q's columns with R's rows, whose
        # signs Householder reflections may flip between neighbouring matrices with exact zeros.
        for side in (plus, minus):
            if side is not None:
                together = np.all(np.isfinite(side[0]), axis=-2) & np.all(np.isfinite(side[-1]), axis=-1)
                side[0] = np.where(together[..., None, :], side[0], np.nan)
                side[-1] = np.where(together[..., :, None], side[-1], np.nan)
    for k, (tangent, b) in enumerate(zip(got, base)):
        if tangent is None or b is None:
            continue
        for j in range(b.size):
            # a complex output: its real and imaginary parts are checked as two real outputs
            for part in ((np.real, np.imag) if b.dtype.kind == "c" else (np.real,)):
                fwd = None if plus is None or not np.isfinite(plus[k].flat[j]) else float(part(plus[k].flat[j]))
                bwd = None if minus is None or not np.isfinite(minus[k].flat[j]) else float(part(minus[k].flat[j]))
                kind = _classify(None if fwd is None else np.array([fwd]), None if bwd is None else np.array([bwd]))
                _check_element(float(part(tangent.flat[j])), kind, fwd, bwd,
                               f"{name}[{i}] at {variant}: jvp, output leaf {k}, element {j}",
                               max(1e-4, 2 * lower_precision(total)))


def test_enough_singular_cases():
    # Most rules have a sample whose degenerate points are inside Python's domain.
    covered = {case.values[0] for case in SINGULAR_CASES}
    assert len(SINGULAR_CASES) >= 1000 and len(covered) >= 0.9 * len(RULES), (len(SINGULAR_CASES), len(covered))


# ---- 2. the documented values at named points, both modes ---------------------------------
INF = math.inf


def vjp_of(name, position, g, *args, **kwargs):
    rule = RULES[name]
    ans = _quiet(rule.func, *args, **kwargs)
    return _quiet(rule.vjps[position], g, ans, *args, **kwargs)


def jvp_of(name, position, t, *args, **kwargs):
    rule = RULES[name]
    ans = _quiet(rule.func, *args, **kwargs)
    return _quiet(rule.jvps[position], t, ans, *args, **kwargs)


def both_modes(name, position, args, expected, kwargs=None, zero_too=True):
    """vjp with g = 1 and jvp with t = 1 give ``expected``; with g = 0 and t = 0 exactly 0 (not NaN)."""
    kwargs = kwargs or {}
    ans = _quiet(RULES[name].func, *args, **kwargs)
    one = np.ones_like(ans, dtype=float) if np.ndim(ans) else 1.0
    arg = args[position]
    unit = np.ones_like(arg, dtype=float) if np.ndim(arg) else 1.0
    np.testing.assert_array_equal(vjp_of(name, position, one, *args, **kwargs), expected)
    np.testing.assert_array_equal(jvp_of(name, position, unit, *args, **kwargs), expected)
    if zero_too:
        np.testing.assert_array_equal(vjp_of(name, position, 0.0 * one, *args, **kwargs), 0.0 * np.asarray(unit))
        np.testing.assert_array_equal(jvp_of(name, position, 0.0 * unit, *args, **kwargs), 0.0 * np.asarray(one))


# d x**y / dx: y x**(y-1), and 0 for y == 0 (x**0 is the constant 1), at x == 0 too.
POWER_DX = [(0.0, 0.0, 0.0), (0.0, 1.0, 1.0), (0.0, 2.0, 0.0), (0.0, 3.0, 0.0), (0.0, 0, 0.0), (0.0, 1, 1.0),
            (0.0, 2, 0.0), (0.0, 0.5, INF), (-2.0, 3, 12.0), (-2.0, 2, -4.0), (-2.0, 0, 0.0), (-2.0, 1, 1.0),
            (-2.0, -1, -0.25), (-2.0, 3.0, 12.0), (-1.5, 2.0, -3.0), (-2.0, 0.0, 0.0)]


@pytest.mark.parametrize("name", ["numpy.power", "numpy.float_power", "builtins.pow", "math.pow"])
@pytest.mark.parametrize("x,y,expected", POWER_DX, ids=[f"{x}**{y}" for x, y, _ in POWER_DX])
def test_power_at_zero_and_negative_bases(name, x, y, expected):
    both_modes(name, 0, (x, y), expected, zero_too=not math.isinf(expected))
    if not math.isinf(expected):
        assert np.isfinite(vjp_of(name, 0, 0.0, x, y))


def test_power_on_arrays_with_exponent_zero():
    x = np.array([0.0, 1.0, -2.0])
    for y in (0, 0.0, np.zeros(3)):
        both_modes("numpy.power", 0, (x, y), np.zeros(3))
    both_modes("numpy.power", 0, (x, np.array([1.0, 2.0, 3.0])), np.array([1.0, 2.0, 12.0]))


def test_power_exponent_derivative_at_base_zero():
    # d x**y / dy = x**y log x: 0 at x == 0 (for y > 0, x**y stays 0); NaN for x < 0 (undefined off integer y).
    both_modes("numpy.power", 1, (0.0, 2.0), 0.0)
    assert np.isnan(vjp_of("numpy.power", 1, 1.0, -2.0, 2.0))


@pytest.mark.parametrize("name", ["numpy.sqrt", "numpy.cbrt", "math.sqrt", "math.cbrt"])
def test_root_at_zero_is_infinite(name):
    # sqrt'(0) = cbrt'(0) = +inf (the one-sided derivative); a zero cotangent or tangent gives exactly 0.
    both_modes(name, 0, (0.0,), INF)
    if name.startswith("numpy"):
        x = np.array([0.0, 4.0])
        np.testing.assert_array_equal(vjp_of(name, 0, np.array([0.0, 1.0]), x)[0], 0.0)


@pytest.mark.parametrize("name", ["numpy.absolute", "numpy.fabs", "builtins.abs", "math.fabs"])
def test_abs_at_zero_is_the_subgradient_zero(name):
    both_modes(name, 0, (0.0,), 0.0)
    if name.startswith("numpy"):
        both_modes(name, 0, (np.array([0.0, -2.0, 3.0]),), np.array([0.0, -1.0, 1.0]))


@pytest.mark.parametrize("name,x,expected", [
    ("numpy.log", 0.0, INF), ("numpy.log2", 0.0, INF), ("numpy.log10", 0.0, INF), ("numpy.log1p", -1.0, INF),
    ("numpy.arcsin", 1.0, INF), ("numpy.arccos", 1.0, -INF), ("numpy.arccosh", 1.0, INF),
    ("numpy.arcsin", -1.0, INF), ("math.asin", 1.0, INF), ("math.acos", -1.0, -INF), ("math.acosh", 1.0, INF),
    ("numpy.reciprocal", 0.0, -INF),
])
def test_infinite_derivatives_at_domain_boundaries(name, x, expected):
    # The value there may be infinite too (log(0) = -inf): the derivative is the one-sided limit, and a
    # zero cotangent (a discarded branch) contributes exactly 0.
    both_modes(name, 0, (x,), expected)


@pytest.mark.parametrize("name", ["numpy.std", "numpy.var", "numpy.nanstd", "numpy.nanvar"])
@pytest.mark.parametrize("kwargs", [{}, {"ddof": 1}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"correction": 1}],
                         ids=["all", "ddof1", "axis0", "axis1-keepdims", "correction1"])
def test_spread_at_zero_spread(name, kwargs):
    # std at zero spread is a kink (std(x + h v) = |h| std(v)): the subgradient 0 in both modes; var is smooth.
    x = np.full((3, 4), 1.5)
    if name.startswith("numpy.nan") and "correction" in kwargs:
        kwargs = {"ddof": 1}
    rng = np.random.default_rng(0)
    ans = RULES[name].func(x, **kwargs)
    g = rng.standard_normal(np.shape(ans)) if np.ndim(ans) else 0.7
    np.testing.assert_array_equal(vjp_of(name, 0, g, x, **kwargs), np.zeros_like(x))
    np.testing.assert_array_equal(jvp_of(name, 0, rng.standard_normal(x.shape), x, **kwargs), np.zeros(np.shape(ans)))


def test_std_of_a_number_and_with_nan():
    for name in ("numpy.std", "numpy.var"):
        both_modes(name, 0, (np.float64(2.0),), 0.0)
    x = np.array([1.0, np.nan, 1.0])
    np.testing.assert_array_equal(vjp_of("numpy.nanstd", 0, 1.0, x), [0.0, 0.0, 0.0])
    assert jvp_of("numpy.nanstd", 0, np.array([1.0, 2.0, 3.0]), x) == 0.0


NORMS = [("numpy.linalg.norm", (np.zeros(4), o), {}) for o in (None, 2, 1, np.inf, -np.inf, 3, 0.5, 0)] + [
    ("numpy.linalg.norm", (np.zeros((3, 4)), o), {}) for o in (None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf)] + [
    ("numpy.linalg.norm", (np.zeros((2, 3)),), {"axis": 1}), ("numpy.linalg.vector_norm", (np.zeros(3),), {}),
    ("numpy.linalg.matrix_norm", (np.zeros((3, 3)),), {"ord": "nuc"}),
    ("numpy.linalg.matrix_norm", (np.zeros((2, 3, 3)),), {"ord": 2})]


@pytest.mark.parametrize("name,args,kwargs", NORMS, ids=[f"{n.split('.')[-1]}-{a[1:]}-{k}" for n, a, k in NORMS])
def test_norm_at_zero_is_the_subgradient_zero(name, args, kwargs):
    ans = RULES[name].func(*args, **kwargs)
    g = np.ones_like(ans) if np.ndim(ans) else 1.0
    np.testing.assert_array_equal(vjp_of(name, 0, g, *args, **kwargs), np.zeros_like(args[0]))
    t = np.random.default_rng(1).standard_normal(np.shape(args[0]))
    np.testing.assert_array_equal(jvp_of(name, 0, t, *args, **kwargs), np.zeros(np.shape(ans)))


def test_norm_with_a_zero_entry_and_p_below_one():
    x = np.array([0.0, 3.0, -4.0])
    got = vjp_of("numpy.linalg.norm", 0, 1.0, x, 0.5)
    assert got[0] == 0.0 and np.all(np.isfinite(got))
    check_against_fd(np.linalg.norm, RULES["numpy.linalg.norm"].vjps, C(np.array([0.5, 3.0, -4.0]), 0.5), 0, "p=0.5")


def test_spectral_norms_at_ties_and_singular_matrices():
    # The largest singular value tied: the cotangent is split evenly (as max); a zero singular value gets 0.
    np.testing.assert_allclose(vjp_of("numpy.linalg.norm", 0, 1.0, np.eye(2), 2), 0.5 * np.eye(2))
    np.testing.assert_allclose(vjp_of("numpy.linalg.norm", 0, 1.0, np.diag([2.0, 0.0]), -2), np.zeros((2, 2)))
    np.testing.assert_allclose(vjp_of("numpy.linalg.norm", 0, 1.0, np.diag([2.0, 0.0]), "nuc"), np.diag([1.0, 0.0]))


@pytest.mark.parametrize("name", ["numpy.maximum", "numpy.minimum", "numpy.fmax", "numpy.fmin"])
def test_elementwise_ties_split_in_half(name):
    x = np.array([1.0, -2.0])
    for position in (0, 1):
        both_modes(name, position, (x, x.copy()), np.array([0.5, 0.5]))


@pytest.mark.parametrize("name", ["numpy.max", "numpy.min", "numpy.amax", "numpy.amin", "numpy.nanmax",
                                  "numpy.nanmin"])
def test_reduction_ties_split_evenly(name):
    x = np.array([2.0, 2.0, 2.0, 2.0])
    np.testing.assert_allclose(vjp_of(name, 0, 1.0, x), np.full(4, 0.25))
    assert jvp_of(name, 0, np.array([1.0, 2.0, 3.0, 6.0]), x) == pytest.approx(3.0)  # the average tangent


def test_sort_with_ties():
    x = np.array([1.0, 1.0, 1.0, 0.0])
    # vjp: the stable order (the first of the tied elements gets the first tied position) ...
    np.testing.assert_array_equal(vjp_of("numpy.sort", 0, np.array([9.0, 0.0, 5.0, 1.0]), x), [0.0, 5.0, 1.0, 9.0])
    # ... jvp: the directional derivative, the tied elements ordered by their tangents.
    np.testing.assert_array_equal(jvp_of("numpy.sort", 0, np.array([3.0, 1.0, 2.0, 7.0]), x), [7.0, 1.0, 2.0, 3.0])


def test_argsort_with_ties_through_grad():
    def by_rank(x, w):
        return np.sum(x[np.argsort(x, kind="stable")] * w)

    x, w = np.array([1.0, 1.0, 0.0]), np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(adsrc.grad(by_rank)(x, w), [2.0, 3.0, 1.0])  # the selection argsort made


@pytest.mark.parametrize("x", [np.array([0.0, 0.0, 2.0]), np.array([2.0, 0.0, 3.0]), np.array([0.0, 5.0]),
                               np.array([[1.0, 0.0], [0.0, 0.0], [2.0, 3.0]])], ids=["00x", "x0x", "0x", "2d"])
def test_cumprod_and_prod_with_zeros_match_finite_differences(x):
    # Polynomials: differentiable at zeros too, so the rules must match the finite differences exactly.
    for name, kwargs in (("numpy.cumprod", {"axis": 0}), ("numpy.cumprod", {}), ("numpy.prod", {}),
                         ("numpy.prod", {"axis": 0})):
        check_against_fd(RULES[name].func, RULES[name].vjps, C(x, **kwargs), 0, f"{name} {kwargs}")
        check_jvp(RULES[name].func, RULES[name], C(x, **kwargs), 1, f"{name} {kwargs}")


@pytest.mark.parametrize("a", [np.zeros((3, 3)), np.ones((3, 3)), np.array([[1.0, 2.0], [2.0, 4.0]]),
                               np.array([[[0.0, 1.0], [0.0, 0.0]], [[2.0, 0.0], [0.0, 1.0]]])],
                         ids=["zeros", "ones", "rank1", "stack"])
def test_det_at_singular_matrices(a):
    # det is a polynomial: its gradient, adj(A)ᵀ, exists at singular matrices, and no inverse is taken.
    check_against_fd(np.linalg.det, RULES["numpy.linalg.det"].vjps, C(a), 0, "det")
    check_jvp(np.linalg.det, RULES["numpy.linalg.det"], C(a), 0, "det")
    if a.shape == (2, 2):
        np.testing.assert_allclose(vjp_of("numpy.linalg.det", 0, 1.0, a), [[4.0, -2.0], [-2.0, 1.0]])


def test_inv_at_a_singular_matrix_is_refused_as_python_refuses():
    def f(a):
        return np.sum(np.linalg.inv(a))

    with pytest.raises(np.linalg.LinAlgError):
        f(np.ones((2, 2)))
    with pytest.raises(np.linalg.LinAlgError):
        adsrc.grad(f)(np.ones((2, 2)))


@pytest.mark.parametrize("name", ["numpy.hypot", "numpy.arctan2", "math.hypot", "math.atan2"])
def test_two_argument_functions_at_the_origin(name):
    # hypot is a norm (subgradient 0 at 0); arctan2 is not even continuous at the origin: taken as 0.
    for position in (0, 1):
        both_modes(name, position, (0.0, 0.0), 0.0)


def test_clip_at_its_bounds():
    da, dlo, dhi = (lambda p, *args: vjp_of("numpy.clip", p, np.ones(3), *args))(0, np.zeros(3), 0.0, 1.0), \
        vjp_of("numpy.clip", 1, np.ones(3), np.array([0.0, 1.0, 2.0]), 0.0, 1.0), \
        vjp_of("numpy.clip", 2, np.ones(3), np.array([0.0, 1.0, 2.0]), 0.0, 1.0)
    np.testing.assert_array_equal(da, [1.0, 1.0, 1.0])  # a == lo: a itself
    assert dlo == 0.0 and dhi == 1.0  # a == hi: a itself; beyond hi: hi
    # lo == hi: the output is hi whatever a is, so a gets nothing, even at a == lo == hi
    x = np.array([0.0, -1.0, 1.0])
    np.testing.assert_array_equal(vjp_of("numpy.clip", 0, np.ones(3), x, 0.0, 0.0), [0.0, 0.0, 0.0])
    assert vjp_of("numpy.clip", 2, np.ones(3), x, 0.0, 0.0) == 3.0


def test_eigh_at_repeated_eigenvalues():
    a = np.diag([1.0, 1.0, 3.0])
    w, v = np.linalg.eigh(a)
    eigh = RULES["numpy.linalg.eigh"]
    # through the eigenvectors, mixing the repeated pair: undefined, refused
    mixing = np.zeros((3, 3))
    mixing[0, 1] = 1.0
    with pytest.raises(InvalidArgument, match="repeat"):
        eigh.vjps[0]((zero, mixing), (w, v), a)
    # a cotangent symmetric on the pair does not depend on the basis chosen in it: defined
    assert np.all(np.isfinite(eigh.vjps[0]((zero, np.ones((3, 3))), (w, v), a)))
    # through the eigenvalues: defined, in both modes
    np.testing.assert_allclose(eigh.vjps[0]((np.array([1.0, 1.0, 2.0]), zero), (w, v), a), np.diag([1.0, 1.0, 2.0]))
    t = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 5.0]])
    np.testing.assert_allclose(jvp_of("numpy.linalg.eigvalsh", 0, t, a), [-1.0, 1.0, 5.0], atol=1e-12)
    dw, dv = jvp_of("numpy.linalg.eigh", 0, t, a)
    np.testing.assert_allclose(dw, [-1.0, 1.0, 5.0], atol=1e-12)
    assert np.isnan(dv).any()  # the eigenvectors' tangent is undefined there


def test_unique_with_repeated_values_goes_to_first_occurrences():
    x = np.array([2.0, 1.0, 2.0, 3.0, 1.0])
    np.testing.assert_array_equal(vjp_of("numpy.unique", 0, np.array([10.0, 20.0, 30.0]), x), [20.0, 10.0, 0, 30.0, 0])
    np.testing.assert_array_equal(jvp_of("numpy.unique", 0, np.arange(5.0), x), [1.0, 0.0, 3.0])
    rows = np.array([[1.0, 2.0], [0.0, 1.0], [1.0, 2.0]])
    g = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(vjp_of("numpy.unique", 0, g, rows, axis=0), [[3.0, 4.0], [1.0, 2.0], [0.0, 0.0]])


# ---- 3. through adsrc.grad and adsrc.jvp ---------------------------------------------------
def polynomial(x):
    return 5.0 * x**0 + 3.0 * x**1 + 2.0 * x**2 + x**3


def power_zero_array(x):
    return np.sum(np.power(x, 0.0) + x**0 + np.power(x, 2))


def negative_base(x):
    return x**3 + x**2 + x**-1


def masked(x):
    safe_sqrt = np.where(x > 0, np.sqrt(x), 0.0)
    safe_log = np.where(x > 0, np.log(x), 0.0)
    safe_ratio = np.where(x != 0, 1.0 / x, 0.0)
    return np.sum(safe_sqrt + safe_log + safe_ratio)


def spread(x):
    return np.std(x) + np.linalg.norm(x - x[0]) + np.var(x, ddof=1)


def test_polynomials_at_zero():
    assert adsrc.grad(polynomial)(0.0) == 3.0
    assert adsrc.jvp(polynomial, (0.0,), (1.0,)) == (5.0, 3.0)
    assert adsrc.grad(adsrc.grad(polynomial))(0.0) == 4.0
    np.testing.assert_array_equal(adsrc.grad(power_zero_array)(np.array([0.0, 1.0, -2.0])), [0.0, 2.0, -4.0])
    assert adsrc.grad(negative_base)(-2.0) == pytest.approx(12.0 - 4.0 - 0.25)


def test_discarded_branches_at_their_singular_points():
    x = np.array([-1.0, 0.0, 4.0])
    # at -1 only 1/x counts (sqrt and log are discarded: NaN and -inf there); at 0 all three are discarded
    expected = [-1.0, 0.0, 0.25 + 0.25 - 1.0 / 16.0]
    got = _quiet(adsrc.grad(masked), x)
    np.testing.assert_allclose(got, expected)
    value, tangent = _quiet(adsrc.jvp, masked, (x,), (np.array([1.0, 0.0, 1.0]),))
    assert np.isfinite(tangent) and tangent == pytest.approx(-1.0 + 0.25 + 0.25 - 1.0 / 16.0)


def test_spread_through_grad_and_jvp():
    x = np.full(4, 2.0)
    np.testing.assert_array_equal(adsrc.grad(spread)(x), np.zeros(4))
    assert adsrc.jvp(spread, (x,), (np.array([1.0, -1.0, 2.0, 0.0]),)) == (0.0, 0.0)


# ---- the rules that were registered as non-differentiable ---------------------------------
def weighted_counts(w, idx):
    return np.sum(np.bincount(idx, w, 4) ** 2)


def weighted_counts_by_keyword(w, idx):
    return np.sum(np.bincount(idx, weights=w) ** 2)


def histogram_loss(a, w):
    hist, edges = np.histogram(a, 4, None, True, w)
    return np.sum(hist * np.arange(4.0)) + np.sum(edges**2)


def filled(v, x):
    return np.sum(np.full((2, 3), v) * x) + np.sum(np.full_like(x, v) ** 2)


def ramp(start, step):
    return np.sum(np.arange(start, 3.0, step) ** 2)


def distinct(x):
    return np.sum(np.unique(x) ** 2 * np.arange(4.0))


def step_at_zero(x1, x2):
    return np.sum(np.heaviside(x1, x2) * x2)


@pytest.mark.parametrize("f,args,wrt", [
    (weighted_counts, (np.array([0.5, -1.0, 2.0, 0.3]), np.array([0, 2, 2, 3])), 0),
    (histogram_loss, (np.array([0.1, 0.7, -0.4, 1.3, 0.9]), np.array([1.0, 2.0, 0.5, 1.5, 1.0])), (0, 1)),
    (filled, (0.7, np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])), (0, 1)),
    (ramp, (0.25, 0.4), (0, 1)),
    (distinct, (np.array([0.3, -1.2, 2.0, 0.7]),), 0),
    (step_at_zero, (np.array([0.0, 1.0, -1.0]), np.array([0.5, 0.25, 2.0])), 1),
], ids=["bincount", "histogram", "full", "arange", "unique", "heaviside"])
def test_formerly_nondifferentiable_functions_have_gradients(f, args, wrt):
    from gradcheck import check

    check(f, *args, wrt=wrt)
    positions_ = (wrt,) if isinstance(wrt, int) else wrt
    tangents = tuple(np.ones_like(a, dtype=float) if i in positions_ else None for i, a in enumerate(args))
    grads = adsrc.grad(f, wrt=wrt)(*args)
    grads = (grads,) if isinstance(wrt, int) else grads
    _, tangent = adsrc.jvp(f, args, tuple(0.0 * np.asarray(a) if t is None else t for a, t in zip(args, tangents)))
    expected = sum(float(np.sum(g * t)) for g, t in zip(grads, (tangents[p] for p in positions_)))
    assert tangent == pytest.approx(expected, rel=1e-9)


def test_weights_by_keyword_are_differentiated_not_dropped():
    # The keyword is bound to np.bincount's weights position, and differentiated there.
    from gradcheck import check

    check(weighted_counts_by_keyword, np.array([0.5, 1.5, -2.0]), np.array([0, 1, 1]))


def test_histogram_edges_refused_where_they_jump():
    def f(a):
        return np.sum(np.histogram(a, 3)[1])

    with pytest.raises(InvalidArgument, match="range is empty"):
        adsrc.grad(f)(np.full(4, 2.0))
    assert np.allclose(adsrc.grad(f)(np.array([0.0, 1.0, 3.0])), [2.0, 0.0, 2.0])


# Samples whose results hold integers in a tuple (the second-order check in test_higher cannot shift
# such a cotangent), checked here against finite differences in both modes.
TUPLE_SAMPLES = [
    ("numpy.unique", C(arr(3, 2), True, True, True)),
    ("numpy.unique", C(arr(2, 3), return_inverse=True, axis=1)),
    ("numpy.unique", C(arr(5), return_counts=True)),
    ("numpy.histogram", C(arr(12), "sturges")),
    ("numpy.histogram", C(arr(12), 3, (flt(-3.0, -2.5), flt(2.5, 3.0)))),
    ("numpy.full_like", C(np.array([1, 2]), flt())),
]


@pytest.mark.parametrize("name,case", TUPLE_SAMPLES, ids=[f"{n}[{i}]" for i, (n, _) in enumerate(TUPLE_SAMPLES)])
def test_rules_with_integer_results_match_finite_differences(name, case):
    rule = RULES[name]
    check_against_fd(rule.func, rule.vjps, case, zlib.crc32(name.encode()), name)
    check_jvp(rule.func, rule, case, zlib.crc32(name.encode()), name)


# ---- eigh at repeated eigenvalues, through a loss that does not depend on the basis chosen --------------
def top_direction(X, b):
    """A PCA of a rank-deficient covariance (two zero eigenvalues): the top principal direction only."""
    w, v = np.linalg.eigh(X @ X.T)
    return (v[:, -1] @ b) ** 2 + w[-1]


def zero_eigenspace(X, b):
    """The projector onto the eigenspace of the repeated zero eigenvalue: the same whatever basis of it."""
    w, v = np.linalg.eigh(X @ X.T)
    null = v[:, :2]
    return b @ (null @ (null.T @ b)) + np.sum(w)


def one_of_the_repeated(X, b):
    w, v = np.linalg.eigh(X @ X.T)
    return (v[:, 0] @ b) ** 2  # which vector of the zero eigenspace is column 0 is NumPy's choice


def _central(f, X, b, eps=1e-6):
    out = np.zeros_like(X)
    for i in np.ndindex(X.shape):
        step = np.zeros_like(X)
        step[i] = eps
        out[i] = (f(X + step, b) - f(X - step, b)) / (2 * eps)
    return out


@pytest.mark.parametrize("f", [top_direction, zero_eigenspace])
@pytest.mark.parametrize("eager", [False, True])
def test_eigh_at_repeated_eigenvalues_differentiates_a_loss_that_does_not_depend_on_the_basis(f, eager):
    rng = np.random.default_rng(7)
    X, b = rng.standard_normal((4, 2)), rng.standard_normal(4)
    w = np.linalg.eigvalsh(X @ X.T)
    assert abs(w[0]) < 1e-12 and abs(w[1]) < 1e-12  # the zero eigenvalue is repeated
    got = adsrc.grad(f, eager=eager)(X, b)
    np.testing.assert_allclose(got, _central(f, X, b), rtol=1e-5, atol=1e-6)


def test_eigh_at_repeated_eigenvalues_refuses_a_loss_that_depends_on_the_basis():
    rng = np.random.default_rng(7)
    X, b = rng.standard_normal((4, 2)), rng.standard_normal(4)
    with pytest.raises(InvalidArgument, match="not unique"):
        adsrc.grad(one_of_the_repeated)(X, b)
