"""Samples for the rules of optional libraries (SciPy) and other spellings, merged into rule_samples.SAMPLES.

Keyed by qualified name like the others; a rule that is not registered (SciPy
not installed) has no generated test, so these samples are then unused. Every
differentiable argument of every rule is exercised by at least one case.
"""
from __future__ import annotations

import numpy as np

from rule_samples import C, Spec, arr, binary, flt, pflt, pos, spd, symmetric_separated, unary, unit, wellcond, with_zero


def inside(*shape):
    """Values in (0.1, 0.9): the domain of logit, and of beta distributions."""
    return arr(*shape, lo=0.1, hi=0.9)


def integers(lo, hi, *shape):
    return Spec(lambda rng: rng.integers(lo, hi, shape))


def lower_triangular(n, *batch):
    """Well-conditioned lower-triangular matrices (for solve_triangular and cho_solve)."""
    return Spec(lambda rng: np.tril(2.0 * np.eye(n) + rng.uniform(-0.5, 0.5, batch + (n, n))))


def upper_triangular(n, *batch):
    return Spec(lambda rng: np.triu(2.0 * np.eye(n) + rng.uniform(-0.5, 0.5, batch + (n, n))))


def small(*shape):
    """Matrices of norm well below 1 (for expm, whose series then converges fast)."""
    return arr(*shape, lo=-0.5, hi=0.5)


SPECIAL = {
    "scipy.special.expit": unary(),
    "scipy.special.logit": unary(inside),
    "scipy.special.erf": unary(),
    "scipy.special.erfc": unary(),
    "scipy.special.erfinv": unary(unit),
    "scipy.special.gamma": unary(pos) + [C(arr(3, lo=-2.7, hi=-2.3))],
    "scipy.special.gammaln": unary(pos) + [C(arr(3, lo=-1.8, hi=-1.2))],
    "scipy.special.digamma": unary(pos),
    "scipy.special.polygamma": [C(1, pos(3)), C(np.array([0, 1, 2]), pos(3)), C(2, pos(2, 1)), C(0, pflt())],
    "scipy.special.beta": binary(pos, pos, pflt),
    "scipy.special.betaln": binary(pos, pos, pflt),
    "scipy.special.xlogy": binary(arr, pos, pflt) + [C(with_zero(arr(3)), pos(3))],
    "scipy.special.xlog1py": binary(arr, pos, pflt) + [C(with_zero(arr(3)), pos(3))],
    "scipy.special.logsumexp": [
        C(arr(3, 4)), C(arr(3, 4), axis=0), C(arr(2, 3, 4), (0, 2), keepdims=True), C(arr(3, 4), 1, pos(3, 4)),
        C(arr(2, 3), None, pos(3), True), C(arr(3, 4), 1, pos(3, 4), False, True), C(arr()),
    ],
    "scipy.special.softmax": [C(arr(3, 4)), C(arr(3, 4), axis=1), C(arr(2, 3, 4), (0, 2)), C(arr(4), 0)],
    "scipy.special.log_softmax": [C(arr(3, 4)), C(arr(3, 4), axis=1), C(arr(2, 3, 4), (0, 2)), C(arr(4), 0)],
    "scipy.special.ndtr": unary(),
    "scipy.special.log_ndtr": unary() + [C(arr(3, lo=-30.0, hi=-10.0))],
    "scipy.special.ndtri": unary(inside),
    "scipy.special.erfcinv": unary(lambda *s: arr(*s, lo=0.1, hi=1.9)),
    "scipy.special.erfi": unary(),
    "scipy.special.erfcx": unary(),
    "scipy.special.dawsn": unary(),
    "scipy.special.j0": unary(), "scipy.special.j1": unary() + [C(np.array([0.0, 1.0]))],
    "scipy.special.y0": unary(pos), "scipy.special.y1": unary(pos),
    "scipy.special.i0": unary(), "scipy.special.i1": unary() + [C(np.array([0.0, 1.0]))],
    "scipy.special.i0e": unary(), "scipy.special.i1e": unary() + [C(np.array([0.0, 1.0]))],
    "scipy.special.k0": unary(pos), "scipy.special.k1": unary(pos),
    "scipy.special.expm1": unary(),
    "scipy.special.log1p": unary(lambda *s: arr(*s, lo=-0.5, hi=2.0)),
    "scipy.special.cbrt": unary(pos) + [C(arr(3, lo=-2.0, hi=-0.5))],
    "scipy.special.exp2": unary(),
    "scipy.special.exp10": unary(lambda *s: arr(*s, lo=-1.0, hi=1.0)),
    "scipy.special.cosdg": unary(lambda *s: arr(*s, lo=-200.0, hi=200.0)),
    "scipy.special.sindg": unary(lambda *s: arr(*s, lo=-200.0, hi=200.0)),
    "scipy.special.entr": unary(pos),
    "scipy.special.rel_entr": binary(pos, pos, pflt),
    "scipy.special.kl_div": binary(pos, pos, pflt),
    "scipy.special.loggamma": unary(pos),
    "scipy.special.rgamma": unary(pos) + [C(arr(3, lo=-2.7, hi=-2.3))],
    "scipy.special.gammainc": [C(pos(3), pos(3)), C(pos(3), pos(2, 3)), C(2.5, pos(3)), C(pos(2, 1), pflt())],
    "scipy.special.gammaincc": [C(pos(3), pos(3)), C(pos(3), pos(2, 3)), C(2.5, pos(3)), C(pos(2, 1), pflt())],
    "scipy.special.boxcox": [C(pos(3), arr(3, lo=-1.0, hi=1.0)), C(pos(2, 3), 0.5), C(pos(3), 0.0),
                             C(pos(), arr(2, lo=-1.0, hi=1.0)), C(pflt(), -0.3)],
    "scipy.special.inv_boxcox": [C(arr(3, lo=-0.5, hi=0.5), arr(3, lo=-1.0, hi=1.0)), C(arr(2, 3, lo=-0.5, hi=0.5), 0.5),
                                 C(arr(3), 0.0), C(arr(lo=-0.5, hi=0.5), arr(2, lo=-1.0, hi=1.0)), C(flt(-0.5, 0.5), -0.3)],
    "scipy.special.betainc": [C(pos(3), pos(3), inside(3)), C(2.5, 1.5, inside(2, 3)), C(pos(2, 1), 3.0, flt(0.2, 0.8))],
    "scipy.special.betaincc": [C(pos(3), pos(3), inside(3)), C(2.5, 1.5, inside(2, 3)), C(pos(2, 1), 3.0, flt(0.2, 0.8))],
    "scipy.special.multigammaln": [C(arr(3, lo=2.0, hi=3.0), 3), C(arr(2, 2, lo=1.5, hi=3.0), 1), C(flt(2.0, 3.0), 4)],
}
# Bessel functions of order v: integer and fractional orders, broadcast orders, a Python float x.
for _name in ("jv", "yv", "iv", "ive", "kv", "kve"):
    SPECIAL[f"scipy.special.{_name}"] = [C(2, pos(3)), C(arr(3, lo=0.2, hi=3.0), pos(3)), C(1.5, pos(2, 3)),
                                         C(np.array([[0.0], [2.5]]), pos(3)), C(0.5, pflt())]
for _name in ("yn", "kn"):
    SPECIAL[f"scipy.special.{_name}"] = [C(2, pos(3)), C(np.array([0, 1, 3]), pos(3)), C(1, pos(2, 3)), C(0, pflt())]

def _continuous(shapes, x=arr, loc=None, scale=None):
    """Samples of a location-scale family's method: x and the shape parameters alone, then with loc and
    scale as arrays, then broadcast against a 2-D x with Python floats."""
    loc = loc or (lambda *s: arr(*s, lo=-0.5, hi=0.5))
    scale = scale or (lambda *s: arr(*s, lo=0.8, hi=1.5))
    return [C(x(3), *(s(3) for s in shapes)), C(x(3), *(s(3) for s in shapes), loc(3), scale(3)),
            C(x(2, 3), *(s(3) for s in shapes), loc(), scale(2, 1)), C(x(), *(s() for s in shapes), loc=0.1)]


def _df(*shape):
    return arr(*shape, lo=1.5, hi=5.0)


def _gamma_x(*shape):
    return arr(*shape, lo=1.0, hi=3.0)


def _beta_x(*shape):
    return arr(*shape, lo=0.3, hi=0.6)


def _beta_loc(*shape):
    return arr(*shape, lo=-0.1, hi=0.1)


def _beta_scale(*shape):
    return arr(*shape, lo=1.0, hi=1.2)


def _poisson():
    return [C(np.array([0, 1, 3]), pos(3)), C(2, pflt()), C(np.array([[1], [4]]), pos(3), 1), C(np.int64(5), pos())]


STATS = {}
for _name, _shapes, _kw in (("norm", [], {}), ("t", [_df], {}), ("gamma", [above := (lambda *s: arr(*s, lo=1.5, hi=3.0))],
                                                                       {"x": _gamma_x}),
                            ("chi2", [_df], {"x": _gamma_x}),
                            ("beta", [above, above], {"x": _beta_x, "loc": _beta_loc, "scale": _beta_scale})):
    for _method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        STATS[f"scipy.stats.{_name}_{_method}"] = _continuous(_shapes, **_kw)
for _method in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"):
    STATS[f"scipy.stats.poisson_{_method}"] = _poisson()
for _method in ("logpdf", "pdf"):
    STATS[f"scipy.stats.multivariate_normal_{_method}"] = [
        C(arr(3), arr(3), spd(3)), C(arr(4, 2), arr(2), spd(2)), C(arr(2), arr(2), pos(2)), C(arr(2), arr(2), pflt()),
        C(arr(3, 1), arr(1), spd(1)),
    ]
STATS["scipy.stats.multivariate_normal_entropy"] = [C(arr(3), spd(3)), C(arr(2), pos(2)), C(arr(2), pflt()),
                                                    C(None, spd(2))]


def simplex(k, *points, complete=True):
    """Points of the (k-1)-simplex along the first axis; without the last component when not ``complete``
    (SciPy completes it with 1 - sum, so that finite differences stay on the simplex)."""
    def make(rng):
        x = rng.dirichlet(np.full(k, 3.0), size=points).T if points else rng.dirichlet(np.full(k, 3.0))
        return x if complete else x[:-1]

    return Spec(make)


for _method in ("logpdf", "pdf"):
    STATS[f"scipy.stats.dirichlet_{_method}"] = [
        C(simplex(4, complete=False), arr(4, lo=0.5, hi=3.0)), C(simplex(3, 2, complete=False), arr(3, lo=0.5, hi=3.0)),
        C(simplex(4), arr(4, lo=0.5, hi=3.0), wrt=(1,)), C(simplex(3, 2), arr(3, lo=1.5, hi=3.0), wrt=(1,)),
    ]

def lu_factored(n):
    """(lu, piv) from scipy.linalg.lu_factor of a well-conditioned matrix, drawn when the sample is."""
    def make(rng):
        import scipy.linalg  # at draw time: these samples exist (unused) where SciPy is not installed

        return scipy.linalg.lu_factor(2.0 * np.eye(n) + rng.uniform(-0.5, 0.5, (n, n)))

    return Spec(make)


def cho_upper(n):
    """(c, False) as cho_factor returns it: the upper factor, and other entries in the lower triangle."""
    return Spec(lambda rng: (upper_triangular(n)(rng) + np.tril(rng.uniform(-1, 1, (n, n)), -1), False))


# cho_solve's lower=True is not in the generated cases: finite differences move the flag to 0.999999,
# which SciPy reads as False. tests/test_scipy.py checks that case against finite differences itself.
LINALG = {
    "scipy.linalg.solve": [
        C(wellcond(3), arr(3)), C(wellcond(3), arr(3, 2)), C(spd(3), arr(3), assume_a="pos"),
        C(spd(3), arr(3, 2), True, assume_a="sym"), C(wellcond(3), arr(3), transposed=True),
        C(upper_triangular(3), arr(3), assume_a="upper triangular"),
        C(lower_triangular(3), arr(3, 2), assume_a="lower triangular"),
    ],
    "scipy.linalg.inv": [C(wellcond(3)), C(spd(3), assume_a="pos"), C(spd(3), assume_a="sym", lower=True)],
    "scipy.linalg.det": [C(wellcond(3)), C(arr(2, 2))],
    "scipy.linalg.cholesky": [C(spd(3)), C(spd(3), lower=True), C(spd(2), True)],
    "scipy.linalg.cho_factor": [C(spd(3)), C(spd(3), True)],
    "scipy.linalg.cho_solve": [C(cho_upper(3), arr(3), wrt=(0, 1)), C(cho_upper(3), arr(3, 2), wrt=(0, 1))],
    "scipy.linalg.lu_factor": [C(wellcond(3)), C(arr(4, 4))],
    "scipy.linalg.lu_solve": [C(lu_factored(3), arr(3), wrt=(0, 1)), C(lu_factored(3), arr(3, 2), 1, wrt=(0, 1)),
                              C(lu_factored(3), arr(3), trans=2, wrt=(0, 1))],
    "scipy.linalg.solve_triangular": [
        C(wellcond(3), arr(3)), C(wellcond(3), arr(3, 2), 1, True), C(wellcond(3), arr(3), lower=True,
                                                                      unit_diagonal=True),
        C(wellcond(3), arr(3, 2), trans="T", unit_diagonal=True),
    ],
    "scipy.linalg.expm": [C(small(3, 3)), C(small(2, 2)), C(small(2, 3, 3))],
    # driver="evd": the default driver ("evr") may flip an eigenvector's sign between neighbouring matrices,
    # which finite differences would read as a jump.
    "scipy.linalg.eigh": [C(symmetric_separated(3), driver="evd"), C(symmetric_separated(3), lower=False, driver="evd"),
                          C(symmetric_separated(3), eigvals_only=True)],
}



def banded(lower, upper, n):
    """The band storage of a diagonally dominant matrix (for solve_banded): rows ``upper`` above the diagonal,
    then the diagonal, then ``lower`` below it; the unused corners hold values that SciPy ignores."""
    def make(rng):
        ab = rng.uniform(-0.5, 0.5, (lower + upper + 1, n))
        ab[upper] += 2.0 + lower + upper
        return ab

    return Spec(make)


LINALG.update({
    "scipy.linalg.solve_sylvester": [C(wellcond(3), wellcond(3), arr(3, 3)), C(wellcond(2), wellcond(3), arr(2, 3)),
                                     C(wellcond(3), wellcond(1), arr(3, 1)),
                                     C(wellcond(2, 2), wellcond(2, 2), arr(2, 2, 2))],
    "scipy.linalg.sqrtm": [C(spd(3)), C(wellcond(3)), C(spd(1)), C(spd(2, 3))],
    "scipy.linalg.solve_banded": [C((1, 1), banded(1, 1, 5), arr(5)), C((2, 1), banded(2, 1, 4), arr(4, 2)),
                                  C((0, 2), banded(0, 2, 4), arr(4)), C((1, 0), banded(1, 0, 3), arr(3, 2))],
})
SIGNAL = {
    "scipy.signal.convolve": [C(arr(5), arr(3)), C(arr(3), arr(5), "valid"), C(arr(4), arr(3), "same"),
                              C(arr(4, 3), arr(2, 2)), C(arr(5, 4), arr(3, 2), "valid", "direct"),
                              C(arr(3, 4), arr(4, 2), "same", "fft"), C(arr(2, 3, 2), arr(2, 2, 2), "valid")],
}

# ---- other spellings of primitives (adsrc/rules/spellings.py): not libraries, but new with them ----------
def _spellings():
    from rule_samples import SAMPLES, nonzero

    same = {"add": "numpy.add", "sub": "numpy.subtract", "mul": "numpy.multiply", "truediv": "numpy.divide",
            "mod": "numpy.remainder", "pow": "numpy.power", "neg": "numpy.negative", "pos": "numpy.positive",
            "matmul": "numpy.matmul", "abs": "builtins.abs"}
    out = {f"operator.{name}": SAMPLES[spelled] for name, spelled in same.items()}
    sequences = [C([arr(2), arr(3)]), C((arr(2), flt())), C(arr(3)), C(arr(2, 3)), C([flt(), flt()])]
    out.update({
        "builtins.tuple": sequences, "builtins.list": sequences,
        "numpy.float64": [C(arr()), C(flt()), C(arr(3))],
        "numpy.float32": [C(arr()), C(flt()), C(arr(3))],  # rounded: checked with a longer step (lower_precision)
        "numpy.float16": [C(arr()), C(flt()), C(arr(2, 2))],
        "numpy.add_reduce": [C(arr(3, 4)), C(arr(3, 4), 1), C(arr(2, 3, 4), (0, 2), keepdims=True), C(arr(3, 4), None),
                             C(arr(3))],
        "numpy.multiply_reduce": [C(nonzero(3, 4)), C(nonzero(3, 4), 1), C(nonzero(4))],
        "numpy.add_accumulate": [C(arr(3, 4)), C(arr(3, 4), 1), C(arr(4))],
        "numpy.multiply_accumulate": [C(nonzero(3, 4)), C(nonzero(2, 3), 1), C(nonzero(4))],
    })
    outer = [C(arr(3), arr(2)), C(arr(2, 2), arr(3)), C(flt(), arr(3)), C(arr(3), flt()), C(arr(2), arr(2, 2))]
    out.update({"numpy.multiply_outer": outer, "numpy.add_outer": outer, "numpy.subtract_outer": outer})
    from rule_samples import pflt, pos

    specs = {"arctan2": (arr, nonzero, pflt), "divide": (arr, nonzero, pflt), "float_power": (pos, arr, flt),
             "power": (pos, arr, flt), "fmod": (arr, pos, pflt), "remainder": (arr, pos, pflt),
             "hypot": (nonzero, nonzero, pflt)}
    for ufunc in ("arctan2", "divide", "float_power", "fmax", "fmin", "fmod", "hypot", "logaddexp", "logaddexp2",
                  "maximum", "minimum", "nextafter", "power", "remainder"):
        sx, sy, scalar = specs.get(ufunc, (arr, arr, flt))
        out[f"numpy.{ufunc}_outer"] = [C(sx(3), sy(2)), C(sx(2, 2), sy(3)), C(sx(), sy(3)), C(sx(3), scalar()),
                                       C(sx(2), sy(2, 2))]
    for extreme in ("maximum", "minimum"):
        out[f"numpy.{extreme}_reduce"] = [C(arr(3, 4)), C(arr(3, 4), 1), C(arr(2, 3, 4), (0, 2), keepdims=True),
                                          C(arr(3, 4), None), C(arr(3))]
        out[f"numpy.{extreme}_accumulate"] = [C(arr(3, 4)), C(arr(3, 4), 1), C(arr(5)), C(arr(2, 3, 4), 2)]
    out["adsrc.rules.spellings.ufunc_at"] = [
        C(np.add, arr(4), np.array([0, 2, 0]), arr(3)), C(np.subtract, arr(2, 3), (np.array([0, 1, 0]), np.array([2, 2, 1])), arr(3)),
        C(np.add, arr(3), 1, flt()), C(np.add, arr(3, 2), [1, 1], arr(2)), C(np.subtract, arr(4), slice(1, 3), arr(2))]
    import operator

    out["functools.reduce"] = [
        C(operator.add, [arr(3), arr(3), arr(3)]), C(operator.mul, [arr(2), arr(2)], arr(2)),
        C(np.maximum, [arr(3), arr(3)]), C(operator.matmul, [arr(2, 2), arr(2, 2), arr(2, 2)]),
        C(np.multiply, arr(3, 2)), C(operator.mul, [flt(), flt()], flt()), C(operator.sub, (arr(2), arr(2)), flt()),
    ]
    return out


LIBRARY_SAMPLES = {**SPECIAL, **STATS, **LINALG, **SIGNAL, **_spellings()}

# Degenerate points (tests/test_singular.py) where a density jumps or its slope diverges logarithmically:
# at "ones", x == loc puts gamma at the edge of its support with a == 1 (the density jumps from 0 to 1) and
# beta at y == 1 with a == b == 1; the one-sided differences there do not converge, so the directional
# derivative is only checked to be free of NaN. And t.cdf at z == 0: SciPy computes it through z**2, so
# it is flat to within 1e-8 of the centre and one-sided differences at that scale read 0 (and t.sf too).
EDGES_OF_SUPPORT = {
    ("scipy.stats.gamma_pdf", 1, "ones"), ("scipy.stats.gamma_pdf", 2, "ones"),
    ("scipy.stats.beta_pdf", 0, "ones"), ("scipy.stats.beta_pdf", 1, "ones"), ("scipy.stats.t_cdf", 2, "ones"),
    ("scipy.stats.t_sf", 1, "ones"),
}
