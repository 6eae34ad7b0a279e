"""Sample arguments for the tests generated from the rule registry.

``SAMPLES`` maps each rule's ``qualname`` to a list of cases. A case holds the
call's positional and keyword arguments, where a :class:`Spec` stands for a
random array (or float) drawn fresh for each test, from a domain where the
function is smooth: positive for log, inside (-1, 1) for arcsin,
well-conditioned matrices for inv and solve, SPD for cholesky, no ties for
max. Every differentiable argument of every rule must be exercised by at least
one case (``test_every_rule_has_samples`` checks it), so a new rule without
samples fails the suite.

``METHOD_SAMPLES`` and ``ATTRIBUTE_SAMPLES`` do the same for array methods
(``x.sum(0)``) and attributes (``x.T``): their first argument is the array.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import collections

import numpy as np


_Pair = collections.namedtuple("_Pair", "w b")  # a structure whose fields getattr reads


class Spec:
    """A random argument: ``spec(rng)`` draws a value."""

    def __init__(self, make: Callable[[np.random.Generator], Any]):
        self.make = make

    def __call__(self, rng: np.random.Generator) -> Any:
        return self.make(rng)


def arr(*shape, lo=-2.0, hi=2.0):
    """A float64 array of ``shape`` (0-d when no shape), uniform in [lo, hi]."""
    return Spec(lambda rng: rng.uniform(lo, hi, shape))


def pos(*shape):
    return arr(*shape, lo=0.5, hi=2.0)


def unit(*shape):
    return arr(*shape, lo=-0.9, hi=0.9)


def above1(*shape):
    return arr(*shape, lo=1.2, hi=3.0)


def nonzero(*shape):
    """Values with |v| in [0.5, 2] and a random sign (kinks of abs/sign stay away)."""
    return Spec(lambda rng: np.asarray(rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)))


def carr(*shape, lo=-2.0, hi=2.0):
    """A complex128 array of ``shape``, real and imaginary parts uniform in [lo, hi]."""
    return Spec(lambda rng: rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape))


def cnonzero(*shape):
    """Complex values with |v| in [0.5, 2] (away from the kinks of abs and angle at 0)."""
    return Spec(lambda rng: np.asarray(rng.uniform(0.5, 2.0, shape) * np.exp(1j * rng.uniform(-3.0, 3.0, shape))))


def flt(lo=-2.0, hi=2.0):
    """A Python float."""
    return Spec(lambda rng: float(rng.uniform(lo, hi)))


def pflt():
    return flt(0.5, 2.0)


def with_zero(spec):
    """``spec`` with its first element set to exactly 0 (prod/cumprod's division-free path)."""

    def make(rng):
        value = spec(rng)
        value.flat[0] = 0.0
        return value

    return Spec(make)


def with_nan(spec):
    def make(rng):
        value = spec(rng)
        value.flat[1] = np.nan
        return value

    return Spec(make)


def wellcond(n, *batch):
    """Matrices close to 2 I: well-conditioned for inv, det and solve."""
    return Spec(lambda rng: 2.0 * np.eye(n) + rng.uniform(-0.5, 0.5, batch + (n, n)))


def spd(n, *batch):
    def make(rng):
        b = rng.uniform(-1.0, 1.0, batch + (n, n))
        return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)

    return Spec(make)


def symmetric_separated(n):
    """A symmetric matrix with eigenvalues 1, 2, ..., n (well separated, for eigh)."""

    def make(rng):
        q, _ = np.linalg.qr(rng.standard_normal((n, n)))
        return (q * np.arange(1.0, n + 1)) @ q.T

    return Spec(make)


def resolve(value: Any, rng: np.random.Generator) -> Any:
    """Draw every Spec inside ``value`` (lists, tuples and dict values are walked)."""
    if isinstance(value, Spec):
        return value(rng)
    if isinstance(value, list):
        return [resolve(v, rng) for v in value]
    if isinstance(value, tuple):
        return tuple(resolve(v, rng) for v in value)
    if isinstance(value, dict):
        return {k: resolve(v, rng) for k, v in value.items()}
    return value


@dataclass
class Case:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    wrt: tuple | None = None  # positions to differentiate; default: every float argument

    def draw(self, rng: np.random.Generator) -> tuple[tuple, dict]:
        return resolve(self.args, rng), resolve(self.kwargs, rng)

    def __repr__(self) -> str:
        return f"Case{self.args!r}"


def C(*args, wrt=None, **kwargs) -> Case:
    return Case(args, kwargs, wrt)


def unary(spec=arr):
    """A 1-D, a 2-D and a 0-d sample of an elementwise function."""
    return [C(spec(4)), C(spec(2, 3)), C(spec())]


def binary(sx=arr, sy=arr, scalar=flt):
    """Equal shapes, broadcasting both ways, 0-d against 2-D, and a Python float operand."""
    return [C(sx(3), sy(3)), C(sx(2, 3), sy(3)), C(sx(2, 1), sy(1, 3)), C(sx(), sy(2, 2)), C(sx(2, 2), scalar())]


def reduction(spec=arr, **extra):
    """Whole-array, int axis, tuple axis with keepdims, positional axis, and 0-d reductions."""
    return [
        C(spec(3, 4), **extra),
        C(spec(3, 4), axis=0, **extra),
        C(spec(2, 3, 4), axis=(0, 2), keepdims=True, **extra),
        C(spec(2, 3, 4), -1, **extra),
        C(spec(), **extra),
    ]


def scalar_math(spec=flt):
    return [C(spec()), C(spec())]


_MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])

SAMPLES: dict[str, list[Case]] = {
    # ---- elementwise ----------------------------------------------------------
    "numpy.add": binary(),
    "numpy.subtract": binary(),
    "numpy.multiply": binary(),
    "numpy.divide": binary(arr, nonzero, pflt),
    "numpy.power": binary(pos, arr) + [C(arr(3), 2), C(arr(2, 2), 3.0, wrt=(0,))],
    "numpy.float_power": binary(pos, arr),
    "numpy.remainder": binary(arr, pos, pflt),
    "numpy.fmod": binary(arr, pos, pflt),
    "numpy.negative": unary(),
    "numpy.positive": unary(),
    "numpy.absolute": unary(nonzero) + [C(cnonzero(3)), C(cnonzero())],
    "numpy.fabs": unary(nonzero),
    "numpy.copysign": [C(nonzero(3), arr(3)), C(nonzero(2, 3), nonzero(3)), C(nonzero(), -1.0)],
    "numpy.ldexp": [C(arr(3), np.array([1, 0, -2])), C(arr(2, 2), 3), C(arr(), np.array([2, 1]))],
    "numpy.sqrt": unary(pos),
    "numpy.cbrt": unary(nonzero),
    "numpy.square": unary(),
    "numpy.reciprocal": unary(nonzero),
    "numpy.exp": unary(),
    "numpy.exp2": unary(),
    "numpy.expm1": unary(),
    "numpy.log": unary(pos),
    "numpy.log2": unary(pos),
    "numpy.log10": unary(pos),
    "numpy.log1p": unary(lambda *s: arr(*s, lo=-0.5, hi=2.0)),
    "numpy.logaddexp": binary(),
    "numpy.logaddexp2": binary(),
    "numpy.sin": unary(),
    "numpy.cos": unary(),
    "numpy.tan": unary(unit),
    "numpy.arcsin": unary(unit),
    "numpy.arccos": unary(unit),
    "numpy.arctan": unary(),
    "numpy.arctan2": binary(arr, nonzero, pflt),
    "numpy.sinh": unary(),
    "numpy.cosh": unary(),
    "numpy.tanh": unary(),
    "numpy.arcsinh": unary(),
    "numpy.arccosh": unary(above1),
    "numpy.arctanh": unary(unit),
    "numpy.hypot": binary(nonzero, nonzero, pflt),
    "numpy.deg2rad": unary(),
    "numpy.radians": unary(),
    "numpy.rad2deg": unary(),
    "numpy.degrees": unary(),
    "numpy.sinc": unary() + [C(Spec(lambda rng: np.array([0.0, 0.3, -1.2])))],
    "numpy.maximum": binary(),
    "numpy.minimum": binary(),
    "numpy.fmax": binary() + [C(Spec(lambda rng: np.array([1.0, np.nan, -0.5])), arr(3))],
    "numpy.fmin": binary() + [C(Spec(lambda rng: np.array([1.0, np.nan, -0.5])), arr(3))],
    "numpy.clip": [
        C(arr(5), -0.5, 0.5),
        C(arr(2, 3), arr(3, lo=-1.0, hi=-0.2), arr(2, 1, lo=0.2, hi=1.0)),
        C(arr(4), None, 0.3),
        C(arr(4), -0.3, None),
        C(arr(), -0.5, 0.5),
    ],
    "numpy.where": [
        C(np.array([True, False, True]), arr(3), arr(3)),
        C(np.array([[True], [False]]), arr(2, 3), flt()),
        C(np.array([True, False]), arr(), arr(3, 2)),
    ],
    "numpy.heaviside": [C(np.array([-1.0, 0.0, 2.0, 0.0]), arr(4)), C(np.array([[0.0], [1.0]]), flt()),
                        C(np.array([0.0, -3.0]), arr())],
    "numpy.conjugate": unary() + [C(carr(3))],
    "numpy.real": unary(),
    "numpy.nan_to_num": unary() + [C(Spec(lambda rng: np.array([1.0, np.nan, np.inf, -2.0])))],
    # ---- complex numbers ------------------------------------------------------
    "numpy.imag": unary() + [C(carr(3)), C(carr(2, 2))],
    "numpy.angle": [C(nonzero(3)), C(cnonzero(3)), C(cnonzero(2, 2), deg=True), C(cnonzero(), True)],
    "numpy.real_if_close": [C(arr(3)), C(carr(3))],
    "adsrc.rules.complex_numbers.real": [C(arr(2, 3)), C(carr(3)), C(flt())],
    "adsrc.rules.complex_numbers.imag": [C(arr(2, 3)), C(carr(3)), C(flt())],
    "numpy.linalg.eig": [C(arr(3, 3)), C(carr(3, 3)), C(arr(2, 3, 3)), C(Spec(lambda rng: np.array(
        [[0.5, -2.0, 0.3], [1.5, 0.2, -0.4], [0.1, 0.6, 1.1]]) + rng.uniform(-0.1, 0.1, (3, 3))))],
    "numpy.linalg.eigvals": [C(arr(3, 3)), C(carr(4, 4)), C(arr(2, 3, 3))],
    # ---- np.fft ---------------------------------------------------------------
    "numpy.fft.fft": [C(arr(5)), C(carr(4, 3), axis=0), C(arr(5), 7, norm="ortho"), C(carr(6), 4, norm="forward")],
    "numpy.fft.ifft": [C(carr(5)), C(arr(3, 4), 6), C(carr(6), 3, 0, "ortho")],
    "numpy.fft.rfft": [C(arr(6)), C(arr(5), 8), C(arr(3, 7), 4, 0, "ortho"), C(arr(6), norm="forward")],
    "numpy.fft.irfft": [C(carr(4)), C(carr(5), 9), C(carr(4, 3), 3, 0, "ortho"), C(carr(5), 4, norm="forward")],
    "numpy.fft.hfft": [C(carr(4)), C(carr(5), 7), C(carr(3, 4), 8, norm="ortho")],
    "numpy.fft.ihfft": [C(arr(6)), C(arr(5), 8), C(arr(3, 5), 3, 0, "forward")],
    "numpy.fft.fftn": [C(carr(3, 4)), C(arr(2, 3, 4), (4, 2), (0, 2)), C(carr(3, 4), norm="ortho")],
    "numpy.fft.ifftn": [C(carr(3, 4)), C(arr(2, 3, 4), (2, 5), (1, 2)), C(carr(2, 3), axes=(0,), norm="forward")],
    "numpy.fft.rfftn": [C(arr(3, 4)), C(arr(2, 3, 5), (4, 2), (0, 2)), C(arr(4, 3), norm="ortho")],
    "numpy.fft.irfftn": [C(carr(3, 4)), C(carr(2, 3, 4), (3, 5), (1, 2)), C(carr(4, 3), norm="ortho")],
    "numpy.fft.fft2": [C(carr(3, 4)), C(arr(2, 3, 4), (2, 6), (1, 2)), C(carr(3, 4), axes=(0, 1), norm="ortho")],
    "numpy.fft.ifft2": [C(carr(3, 4)), C(arr(3, 3), (4, 2), (0, 1), norm="forward")],
    "numpy.fft.rfft2": [C(arr(3, 4)), C(arr(2, 3, 5), (4, 3), (1, 2))],
    "numpy.fft.irfft2": [C(carr(3, 4)), C(carr(3, 3), (4, 5), (0, 1), norm="ortho")],
    "numpy.fft.fftshift": [C(arr(5)), C(carr(3, 4)), C(arr(3, 4), axes=0)],
    "numpy.fft.ifftshift": [C(arr(5)), C(carr(3, 4)), C(arr(3, 4), axes=(1,))],
    # ---- the math module ------------------------------------------------------
    "math.sin": scalar_math(),
    "math.cos": scalar_math(),
    "math.tan": scalar_math(lambda: flt(-1.0, 1.0)),
    "math.asin": scalar_math(lambda: flt(-0.9, 0.9)),
    "math.acos": scalar_math(lambda: flt(-0.9, 0.9)),
    "math.atan": scalar_math(),
    "math.atan2": [C(flt(), pflt()), C(flt(), flt(-2.0, -0.5))],
    "math.sinh": scalar_math(),
    "math.cosh": scalar_math(),
    "math.tanh": scalar_math(),
    "math.asinh": scalar_math(),
    "math.acosh": scalar_math(lambda: flt(1.2, 3.0)),
    "math.atanh": scalar_math(lambda: flt(-0.9, 0.9)),
    "math.exp": scalar_math(),
    "math.exp2": scalar_math(),
    "math.expm1": scalar_math(),
    "math.log": [C(pflt()), C(pflt(), flt(1.5, 4.0)), C(pflt(), 10.0)],
    "math.log2": scalar_math(pflt),
    "math.log10": scalar_math(pflt),
    "math.log1p": scalar_math(lambda: flt(-0.5, 2.0)),
    "math.sqrt": scalar_math(pflt),
    "math.cbrt": scalar_math(pflt) + [C(-1.7)],
    "math.pow": [C(pflt(), flt()), C(pflt(), 3.0), C(-1.5, 2.0, wrt=(0,))],
    "math.hypot": [C(flt(), flt()), C(flt(), flt(), flt(), flt()), C(flt()), C(*[flt() for _ in range(16)])],
    "math.fabs": [C(flt(0.5, 2.0)), C(flt(-2.0, -0.5))],
    "math.erf": scalar_math(),
    "math.erfc": scalar_math(),
    "math.gamma": scalar_math(lambda: flt(0.2, 5.0)) + [C(flt(-2.7, -2.3)), C(flt(12.0, 30.0))],
    "math.lgamma": scalar_math(lambda: flt(0.2, 5.0)) + [C(flt(-1.8, -1.2)), C(flt(12.0, 30.0)), C(-0.5)],
    "math.degrees": scalar_math(),
    "math.radians": scalar_math(),
    "math.copysign": [C(pflt(), flt()), C(flt(-2.0, -0.5), -1.0)],
    "math.ldexp": [C(flt(), 3), C(flt(), -2)],
    "math.fmod": [C(flt(-5.0, 5.0), pflt()), C(5.3, 2.0)],
    "math.remainder": [C(flt(-5.0, 5.0), pflt()), C(5.3, 2.0)],
    "math.fsum": [C([flt(), flt(), flt()]), C(arr(4))],
    "math.prod": [C([flt(), flt(), flt()]), C(arr(4)), C([0.0, flt(), flt()])],
    "math.dist": [C([flt(), flt()], [flt(), flt()]), C(arr(3), arr(3))],
    "math.sumprod": [C([flt(), flt()], [flt(), flt()]), C(arr(3), arr(3))],
    # ---- builtins -------------------------------------------------------------
    "builtins.getattr": [C(Spec(lambda rng: _Pair(rng.uniform(-2, 2, 3), float(rng.uniform()))), "w"),
                         C(Spec(lambda rng: _Pair(rng.uniform(-2, 2, 3), float(rng.uniform()))), "b"),
                         # a default, returned where the attribute is missing
                         C(Spec(lambda rng: _Pair(rng.uniform(-2, 2, 3), float(rng.uniform()))), "missing", flt(), wrt=(2,))],
    "builtins.sorted": [C([flt(), flt(), flt()]), C(arr(4)), C([flt(), flt(), flt()], reverse=True),
                        C(arr(4), reverse=True)],  # key= is checked in tests/test_objects.py
    "builtins.abs": [C(flt(0.5, 2.0)), C(flt(-2.0, -0.5)), C(nonzero(3))],
    "builtins.float": [C(arr()), C(flt()), C(Spec(lambda rng: np.float64(rng.uniform())))],
    "builtins.pow": [C(pflt(), flt()), C(pos(3), 2), C(pos(2), arr(2))],
    "builtins.sum": [C([arr(3), arr(3)]), C([flt(), flt(), flt()]), C(arr(3, 2)), C([arr(2), flt()], arr(2))],
    "builtins.max": [C(flt(), flt()), C(*[flt() for _ in range(16)]), C([flt(), flt(), flt()]), C(arr(4))],
    "builtins.min": [C(flt(), flt()), C(*[flt() for _ in range(16)]), C([flt(), flt(), flt()]), C(arr(4))],
    "builtins.list": [C(arr(3, 2)), C([arr(2), flt()]), C((flt(), arr(3))), C([flt()])],
    "builtins.tuple": [C(arr(4)), C([flt(), arr(2, 2)])],
    "builtins.dict": [C([("a", flt()), ("b", arr(2))]), C([("a", flt()), ("b", arr(2)), ("a", flt())]),
                      C({"a": flt(), "b": arr(3)}), C([("a", flt()), ("b", arr(2))], b=2.0), C({"a": arr(2), "c": flt()}, a=1.0)],
    "adsrc.rules.iterables.dict_with": [C([("a", flt()), ("b", arr(2))], {"b": arr(2), "c": flt()}),
                                        C({"a": flt(), "b": arr(3)}, {"c": arr(2)}), C((), {"a": arr(3)})],
    "adsrc.rules.iterables.unpacked": [C(arr(3, 2), 3), C([flt(), arr(2)], 2), C((arr(2), flt(), flt()), 3),
                                       C({"w": flt(), "b": arr(2)}, 2)],
    "adsrc.rules.iterables.zipped_star": [C(arr(3, 2), 3), C([[flt(), flt()], [arr(2), arr(2)]], 2)],
    "adsrc.rules.iterables.zip_star": [C(arr(3, 2)), C([[flt(), flt()], [arr(2), arr(2)]]),
                                       C([arr(4), [flt(), flt()], (arr(2), arr(2), arr(2))])],  # stops at 2
    "adsrc.rules.iterables.dict_values": [C({"w": arr(2, 2), "b": flt()})],
    "adsrc.rules.iterables.dict_items": [C({"w": arr(3), "b": flt()})],
    "adsrc.rules.iterables.dict_get": [C({"w": arr(3), "b": flt()}, "w", flt(), wrt=(0,)),
                                       C({"w": arr(3), "b": flt()}, "z", arr(3))],
    # ---- reductions -----------------------------------------------------------
    "numpy.sum": reduction() + [C(arr(3, 4), where=_MASK), C(arr(2, 3), 1, None, None, True)],
    "numpy.mean": reduction() + [C(arr(3, 4), axis=1, where=_MASK)],
    "numpy.prod": reduction(nonzero) + [C(with_zero(arr(3, 4)), axis=1), C(with_zero(arr(2, 2))),
                                        C(arr(3), initial=1.5)],
    "numpy.max": reduction() + [C(arr(3), initial=5.0), C(arr(2, 3), axis=1, initial=0.0)],
    "numpy.min": reduction(),
    "numpy.amax": reduction(),
    "numpy.amin": reduction(),
    "numpy.ptp": reduction(),
    "numpy.var": reduction() + [C(arr(3, 4), 1, ddof=1), C(arr(5), correction=1)],
    "numpy.std": reduction() + [C(arr(3, 4), axis=0, ddof=1), C(arr(5), correction=1)],
    "numpy.nansum": [C(with_nan(arr(3, 4))), C(with_nan(arr(3, 4)), axis=0), C(arr(2, 3), (0, 1), keepdims=True)],
    "numpy.nanmean": [C(with_nan(arr(3, 4))), C(with_nan(arr(3, 4)), axis=1, keepdims=True)],
    "numpy.nanmax": [C(with_nan(arr(3, 4))), C(with_nan(arr(3, 4)), axis=0)],
    "numpy.nanmin": [C(with_nan(arr(3, 4))), C(with_nan(arr(3, 4)), axis=1)],
    "numpy.nanprod": [C(with_nan(nonzero(3, 4))), C(with_nan(nonzero(3, 4)), axis=1)],
    "numpy.nanvar": [C(with_nan(arr(3, 4))), C(with_nan(arr(3, 4)), axis=1, ddof=1)],
    "numpy.nanstd": [C(with_nan(arr(3, 4))), C(with_nan(arr(3, 4)), axis=0, keepdims=True)],
    "numpy.average": [C(arr(3, 4)), C(arr(3, 4), 1, pos(4)), C(arr(3, 4), None, pos(3, 4)),
                      C(arr(3, 4), 0, pos(3), True), C(arr(2, 3), axis=1, keepdims=True)],
    "numpy.cumsum": [C(arr(5)), C(arr(3, 4), axis=1), C(arr(3, 4)), C(arr(2, 3, 2), 0)],
    "numpy.cumprod": [C(nonzero(5)), C(nonzero(3, 4), axis=0), C(with_zero(arr(3, 4)), axis=1),
                      C(with_zero(arr(2, 3)))],
    "numpy.cumulative_sum": [C(arr(5)), C(arr(3, 4), axis=0, include_initial=True)],
    "numpy.cumulative_prod": [C(nonzero(5)), C(with_zero(arr(3, 4)), axis=1, include_initial=True)],
    "adsrc.rules.reductions.logsumexp": [C(arr(5)), C(arr(3, 4), axis=1), C(arr(3, 4), (0, 1), keepdims=True),
                                         C(arr(2, 3), axis=0, keepdims=True), C(arr())],
    "numpy.diff": [C(arr(5)), C(arr(3, 4), 2, 0), C(arr(4), prepend=1.0), C(arr(2, 3), append=np.zeros((2, 1)))],
    "numpy.bincount": [C(np.array([0, 2, 2, 1]), arr(4)), C(np.array([1, 1, 3]), arr(3), 6),
                       C(np.array([[0, 1], [1, 1]]).ravel(), arr(4), minlength=3)],
    "numpy.histogram": [
        C(arr(20), 5, None, None, pos(20)),  # weights, and the edges from min/max of a
        C(arr(20), np.array([-2.5, -1.0, 0.0, 0.5, 2.5]), None, True, pos(20)),  # edges given, density
        C(arr(20), 4, (-3.0, 3.0), True),  # the range
        C(arr(20), 4, [flt(-3.0, -2.5), flt(2.5, 3.0)], None, pos(20)),
        C(arr(12), 3, None, True, pos(12)),  # density with edges from the data
        C(arr(12), "sturges", None, True),
    ],
    "numpy.histogram_bin_edges": [C(arr(10), 4), C(arr(10), np.array([-3.0, 0.0, 1.0, 3.0])),
                                  C(arr(10), 3, (flt(-3.0, -2.5), flt(2.5, 3.0)))],
    # ---- products and contractions -------------------------------------------
    "numpy.einsum": [
        C("ij,jk->ik", arr(2, 3), arr(3, 4)),
        C("ii->i", arr(3, 3)),
        C("ij->i", arr(2, 3)),
        C("i,i", arr(3), arr(3)),
        C("bij,bjk->bik", arr(2, 2, 3), arr(2, 3, 2)),
        C("ij,k->kji", arr(2, 3), arr(2)),
        C("iij,j->i", arr(2, 2, 3), arr(3)),
        C("ab,bc,cd,de,ef,fg->ag", *[arr(2, 2) for _ in range(6)]),
        C(",".join("a" * 63) + "->a", *[arr(2, lo=0.8, hi=1.25) for _ in range(63)]),  # NumPy's most
        # ellipsis: batch axes, broadcast ones (a length-1 axis is summed back), implicit output
        C("...ij,...jk->...ik", arr(2, 2, 3), arr(3, 2)),
        C("...ij,...jk->...ik", arr(1, 2, 3), arr(2, 1, 3, 2)),
        C("i...->...", arr(2, 3, 4)),
        C("...ij,...j", arr(2, 3), arr(4, 1, 3)),
        C("i...i", arr(2, 3, 2)),
        # the sublist form: operands at the even positions
        C(arr(2, 3), [0, 1], arr(3, 4), [1, 2], [0, 2]),
        C(arr(2, 3), [0, 1], arr(3), [1]),
        C(arr(2, 2, 3), [Ellipsis, 0, 1], arr(3, 2), [1, 2], [Ellipsis, 0, 2]),
        C(arr(3, 3), [5, 5], [5]),
        C(arr(2, 3), [30, 1], arr(3), [1], [30]),
    ],
    "numpy.matmul": [C(arr(2, 3), arr(3, 4)), C(arr(3), arr(3, 2)), C(arr(2, 3), arr(3)), C(arr(3), arr(3)),
                     C(arr(2, 2, 3), arr(3, 2)), C(arr(1, 2, 3), arr(2, 3, 2))],
    "numpy.linalg.matmul": [C(arr(2, 3), arr(3, 4)), C(arr(2, 2, 3), arr(3))],
    "numpy.dot": [C(arr(2, 3), arr(3, 4)), C(arr(3), arr(3)), C(flt(), arr(3)), C(arr(2, 2), arr()),
                  C(arr(2, 3, 4), arr(4, 2)), C(arr(2, 3), arr(2, 3, 2))],
    "numpy.inner": [C(arr(3), arr(3)), C(arr(2, 3), arr(4, 3)), C(arr(), arr(3))],
    "numpy.tensordot": [C(arr(2, 3, 4), arr(3, 4, 2)), C(arr(2, 3), arr(3, 2), axes=1),
                        C(arr(2, 3, 4), arr(4, 2, 3), axes=([1, 2], [2, 0])), C(arr(2, 3), arr(2), (0, 0))],
    "numpy.outer": [C(arr(3), arr(4)), C(arr(2, 2), arr(3))],
    "numpy.kron": [C(arr(2, 2), arr(3, 2)), C(arr(2), arr(3)), C(arr(2, 3), arr(2))],
    "numpy.vdot": [C(arr(3), arr(3)), C(arr(2, 2), arr(4))],
    "numpy.vecdot": [C(arr(3), arr(3)), C(arr(2, 3), arr(3)), C(arr(3, 2), arr(3, 2), axis=0)],
    "numpy.linalg.vecdot": [C(arr(3), arr(3)), C(arr(2, 3), arr(2, 3))],
    "numpy.linalg.outer": [C(arr(3), arr(4))],
    "numpy.linalg.tensordot": [C(arr(2, 3), arr(3, 2), axes=1), C(arr(2, 3, 4), arr(3, 4, 2))],
    "numpy.linalg.multi_dot": [C([arr(2, 3), arr(3, 4), arr(4, 2)]), C([arr(3), arr(3, 4), arr(4)]),
                               C([arr(2, 3), arr(3, 2)]), C([arr(3), arr(3, 2), arr(2, 2), arr(2, 3)])],
    "numpy.trace": [C(arr(3, 3)), C(arr(3, 4), 1), C(arr(2, 3, 3), 0, 1, 2)],
    "numpy.diagonal": [C(arr(3, 3)), C(arr(3, 4), -1), C(arr(2, 3, 4), 0, 1, 2), C(arr(3, 4), 2)],
    "numpy.diag": [C(arr(3)), C(arr(3, 3)), C(arr(3), 1), C(arr(3, 4), -1)],
    "numpy.diagflat": [C(arr(3)), C(arr(2, 2), 1)],
    "numpy.triu": [C(arr(3, 3)), C(arr(3, 4), 1), C(arr(2, 3, 3), -1)],
    "numpy.tril": [C(arr(3, 3)), C(arr(3, 4), 1), C(arr(2, 3, 3), -1)],
    "numpy.linalg.trace": [C(arr(3, 3)), C(arr(2, 3, 4), offset=1)],
    "numpy.linalg.diagonal": [C(arr(3, 3)), C(arr(2, 3, 4), offset=-1)],
    "numpy.cross": [C(arr(3), arr(3)), C(arr(2, 3), arr(3)), C(arr(3, 2), arr(3, 2), axis=0)],
    "numpy.linalg.cross": [C(arr(3), arr(3)), C(arr(2, 3), arr(2, 3))],
    # ---- norms ----------------------------------------------------------------
    "numpy.linalg.norm": [
        C(arr(4)), C(arr(3, 4)), C(arr(4), 1), C(arr(4), np.inf), C(arr(4), -np.inf), C(arr(4), 3),
        C(arr(4), 0), C(arr(3, 4), None, 1), C(arr(3, 4), "fro"), C(arr(3, 4), "nuc"), C(arr(3, 4), 2),
        C(arr(3, 4), -2), C(arr(3, 4), 1), C(arr(3, 4), -np.inf), C(arr(2, 3, 4), None, (1, 2)),
        C(arr(2, 3, 4), 2, (2, 0), keepdims=True), C(arr(3, 4), keepdims=True),
    ],
    "numpy.linalg.vector_norm": [C(arr(4)), C(arr(3, 4), axis=1, ord=1), C(arr(2, 3, 4), axis=(0, 2), keepdims=True),
                                 C(arr(3, 4), ord=np.inf)],
    "numpy.linalg.matrix_norm": [C(arr(3, 4)), C(arr(2, 3, 3), ord="nuc"), C(arr(3, 4), ord=1, keepdims=True),
                                 C(arr(2, 3, 4), ord=-np.inf)],
    # ---- matrix functions -----------------------------------------------------
    "numpy.linalg.inv": [C(wellcond(3)), C(wellcond(2, 2))],
    "numpy.linalg.det": [C(wellcond(3)), C(wellcond(2, 2)), C(Spec(lambda rng: -wellcond(3)(rng)))],
    "numpy.linalg.slogdet": [C(wellcond(3)), C(wellcond(2, 3))],
    "numpy.linalg.solve": [C(wellcond(3), arr(3)), C(wellcond(3), arr(3, 2)), C(wellcond(3, 2), arr(2, 3, 2)),
                           C(wellcond(3, 2), arr(3))],
    "numpy.linalg.matrix_power": [C(wellcond(3), 3), C(wellcond(2), 1), C(wellcond(3), 0), C(wellcond(3), -2)],
    "numpy.linalg.cholesky": [C(spd(3)), C(spd(2, 2)), C(spd(3), upper=True)],
    "numpy.linalg.eigh": [C(symmetric_separated(3)), C(symmetric_separated(4), "U")],
    "numpy.linalg.eigvalsh": [C(symmetric_separated(3)), C(symmetric_separated(3), UPLO="U")],
    "numpy.linalg.svdvals": [C(arr(3, 4)), C(arr(2, 3, 2))],
    # ---- shape ----------------------------------------------------------------
    "numpy.reshape": [C(arr(2, 3), (3, 2)), C(arr(6), (2, -1)), C(arr(2, 3), (3, 2), "F"), C(arr(2, 3), shape=(6,)),
                      C(arr(), (1, 1))],
    "numpy.ravel": [C(arr(2, 3)), C(arr(2, 3), "F"), C(arr())],
    "adsrc.rules.shape.flatten": [C(arr(2, 3)), C(arr(2, 3), "F")],
    "numpy.transpose": [C(arr(2, 3)), C(arr(2, 3, 4), (1, 2, 0)), C(arr(2, 3, 4), axes=(2, 0, -2))],
    "numpy.swapaxes": [C(arr(2, 3, 4), 0, 2), C(arr(2, 3), -1, 0)],
    "numpy.moveaxis": [C(arr(2, 3, 4), 0, -1), C(arr(2, 3, 4), (0, 1), (2, 0))],
    "numpy.rollaxis": [C(arr(2, 3, 4), 2), C(arr(2, 3, 4), 0, 2), C(arr(2, 3, 4), -1, 1), C(arr(2, 3, 4), 1, 3)],
    "numpy.expand_dims": [C(arr(2, 3), 0), C(arr(2, 3), (0, 3)), C(arr(), -1)],
    "numpy.squeeze": [C(arr(1, 3, 1)), C(arr(1, 3, 1), 2), C(arr(1, 3, 1), axis=(0,))],
    "numpy.broadcast_to": [C(arr(3), (2, 3)), C(arr(2, 1), (2, 4)), C(arr(), (3,))],
    "numpy.atleast_1d": [C(arr()), C(arr(3)), C(arr(3), arr(2, 2), arr()), C(*[arr(2) for _ in range(8)])],
    "numpy.atleast_2d": [C(arr()), C(arr(3)), C(arr(3), arr(2, 2), arr()), C(*[arr(2) for _ in range(8)])],
    "numpy.atleast_3d": [C(arr(3)), C(arr(2, 3)), C(arr(3), arr(2, 2), arr()), C(*[arr(2) for _ in range(8)])],
    "numpy.matrix_transpose": [C(arr(2, 3)), C(arr(2, 3, 4))],
    "numpy.linalg.matrix_transpose": [C(arr(2, 3)), C(arr(2, 3, 4))],
    "numpy.array": [C([flt(), flt(), flt()]), C([arr(2), arr(2)]), C([[flt(), flt()], [flt(), flt()]]), C(arr(2, 3))],
    "numpy.asarray": [C([flt(), flt()]), C((arr(2), arr(2))), C(arr(3))],
    "numpy.asanyarray": [C([flt(), flt()]), C(arr(3))],
    "numpy.ascontiguousarray": [C([flt(), flt()]), C(arr(3, 2))],
    "numpy.copy": [C(arr(2, 3)), C(arr())],
    "adsrc.rules.shape.astype": [C(arr(2, 3), np.float64), C(arr(3), "float64"), C(arr(3), np.complex128)],
    "numpy.astype": [C(arr(2, 3), np.float64), C(arr(2), "complex128")],
    "adsrc.rules.shape.item": [C(arr(2, 3), 4), C(arr(2, 3), (1, 2)), C(arr(1)), C(arr(2, 3), 1, 0)],
    "numpy.tile": [C(arr(3), 2), C(arr(2, 3), (2, 1)), C(arr(2), (2, 1, 3)), C(arr(2, 3), 2)],
    "numpy.repeat": [C(arr(3), 2), C(arr(2, 3), 2, 1), C(arr(2, 3), [1, 0, 2], 1), C(arr(2, 2), [2, 1, 1, 3])],
    "numpy.flip": [C(arr(2, 3)), C(arr(2, 3), 1), C(arr(2, 3, 2), (0, 2))],
    "numpy.fliplr": [C(arr(2, 3))],
    "numpy.flipud": [C(arr(3)), C(arr(2, 3))],
    "numpy.rot90": [C(arr(2, 3)), C(arr(2, 3), 2), C(arr(2, 3, 4), 3, (1, 2))],
    "numpy.roll": [C(arr(5), 2), C(arr(2, 3), -1, 1), C(arr(2, 3), (1, 2), (0, 1)), C(arr(2, 3), 4)],
    "numpy.pad": [C(arr(3), 1), C(arr(2, 3), ((1, 0), (2, 1))), C(arr(2, 3), 1, "edge"), C(arr(4), 2, "reflect"),
                  C(arr(4), (1, 3), "wrap"), C(arr(2, 3), 2, mode="symmetric"), C(arr(2, 2), 1, constant_values=3.0)],
    "numpy.sort": [C(arr(5)), C(arr(3, 4), 0), C(arr(3, 4), None)],
    "numpy.full": [C((2, 3), flt()), C((2, 3), arr(3)), C((3,), arr(), np.float64), C((2, 2), arr(2, 1), order="F")],
    "numpy.full_like": [C(arr(2, 3), flt()), C(arr(2, 3), arr(3)), C(arr(3), flt(), shape=(2, 3))],
    "numpy.arange": [C(flt(-1.0, 0.0), flt(3.0, 4.0), flt(0.3, 0.45)), C(flt(-1.0, 0.0), 3.0), C(flt(2.2, 2.8)),
                     C(0.5, 2.0, flt(0.3, 0.45))],
    # (unique and histogram with integer results in a tuple are in tests/test_singular.py: the
    # second-order check cannot shift a cotangent with integer leaves)
    "numpy.unique": [C(arr(6)), C(arr(3, 2), axis=0), C(arr(2, 3), axis=1), C([flt(), flt(), flt()])],
    "numpy.linspace": [C(flt(), flt()), C(flt(), flt(), 7), C(arr(2), arr(2), 5), C(flt(), flt(), 5, False),
                       C(flt(), flt(), 4, retstep=True), C(arr(2), flt(), 3, axis=1)],
    # ---- joining and splitting ------------------------------------------------
    "numpy.concatenate": [C([arr(2, 3), arr(1, 3)]), C([arr(2, 3), arr(2, 1)], 1), C([arr(2), arr(3, 2)], None),
                          C((arr(2), arr(3)), axis=0)],
    "numpy.stack": [C([arr(3), arr(3)]), C([arr(2, 3), arr(2, 3), arr(2, 3)], 1), C([arr(2), arr(2)], -1),
                    C([arr(), arr()])],
    "numpy.vstack": [C([arr(3), arr(2, 3)]), C([arr(), arr(1)])],
    "numpy.hstack": [C([arr(2), arr(3)]), C([arr(2, 1), arr(2, 3)]), C([arr(), arr(2)])],
    "numpy.dstack": [C([arr(2), arr(2)]), C([arr(2, 2), arr(2, 2, 3)])],
    "numpy.column_stack": [C([arr(3), arr(3, 2)]), C([arr(3), arr(3)])],
    "numpy.append": [C(arr(3), arr(2)), C(arr(2, 3), arr(1, 3), 0), C(arr(2, 2), flt())],
    "numpy.split": [C(arr(6), 3), C(arr(4, 3), [1, 3], 0), C(arr(2, 6), 2, 1)],
    "numpy.array_split": [C(arr(7), 3), C(arr(2, 5), [2], 1)],
    "numpy.hsplit": [C(arr(2, 4), 2), C(arr(6), 3)],
    "numpy.vsplit": [C(arr(4, 2), 2)],
    "numpy.dsplit": [C(arr(2, 2, 4), 2)],
    "numpy.unstack": [C(arr(3, 2)), C(arr(2, 3), axis=1)],
    # ---- indexing -------------------------------------------------------------
    "operator.getitem": [
        C(arr(5), 2), C(arr(5), -1), C(arr(3, 4), (slice(None), 1)), C(arr(3, 4), (Ellipsis, None, slice(1, 3))),
        C(arr(5), np.array([0, 0, 3])), C(arr(3, 4), (np.array([2, 0, 2]), slice(None))), C(arr(3, 4), _MASK),
        C(arr(5), [1, 1, -1]), C(arr(2, 3, 4), (0, Ellipsis, -1)), C(arr(5), slice(None, None, -2)),
        C(arr(3, 4), (np.array([0, 2, 2]), np.array([1, 1, 3]))),
        C([arr(2), arr(3)], 1), C((arr(2), flt()), -2), C([arr(2), arr(2), arr(3)], slice(0, 2)),
    ],
    "numpy.take": [C(arr(5), [0, 0, 4]), C(arr(3, 4), [1, 1], 1), C(arr(3, 4), [[0, 11]]),
                   C(arr(5), [5, -7], None, None, "wrap"), C(arr(4), [7, -1], mode="clip")],
    "numpy.take_along_axis": [C(arr(3, 4), np.array([[0], [3], [3]]), 1), C(arr(3, 4), np.array([[0, 1, 2, 0]]), 0),
                              C(arr(5), np.array([4, 4, -1]), None)],
}

METHOD_SAMPLES: dict[str, list[Case]] = {
    "values": [C({"w": arr(2, 2), "b": flt()})],
    "items": [C({"w": arr(3), "b": flt()})],
    "get": [C({"w": arr(3), "b": flt()}, "b", arr(3)), C({"w": arr(3)}, "z", flt())],
    "sum": [C(arr(2, 3)), C(arr(2, 3), 0), C(arr(2, 3), axis=1, keepdims=True)],
    "mean": [C(arr(2, 3)), C(arr(2, 3), (0, 1))],
    "prod": [C(nonzero(2, 3)), C(nonzero(2, 3), 1)],
    "max": [C(arr(2, 3)), C(arr(2, 3), axis=1, keepdims=True)],
    "min": [C(arr(2, 3)), C(arr(2, 3), 0)],
    "std": [C(arr(2, 3)), C(arr(2, 3), 1, ddof=1)],
    "var": [C(arr(2, 3)), C(arr(2, 3), axis=0)],
    "cumsum": [C(arr(2, 3)), C(arr(2, 3), 1)],
    "cumprod": [C(nonzero(2, 3)), C(nonzero(2, 3), axis=0)],
    "reshape": [C(arr(2, 3), 3, 2), C(arr(2, 3), (6,)), C(arr(2, 3), -1, order="F")],
    "transpose": [C(arr(2, 3)), C(arr(2, 3, 4), 1, 0, 2), C(arr(2, 3, 4), (2, 0, 1))],
    "dot": [C(arr(2, 3), arr(3, 2)), C(arr(3), arr(3))],
    "trace": [C(arr(3, 3)), C(arr(2, 3), 1)],
    "diagonal": [C(arr(3, 3)), C(arr(2, 3, 4), 0, 1, 2)],
    "ravel": [C(arr(2, 3)), C(arr(2, 3), "F")],
    "flatten": [C(arr(2, 3)), C(arr(2, 3), order="F")],
    "copy": [C(arr(2, 3))],
    "clip": [C(arr(5), -0.5, 0.5), C(arr(5), min=-0.5), C(arr(5), max=0.3), C(arr(5), None, 0.2)],
    "astype": [C(arr(2, 3), np.float64), C(arr(3), "float64", copy=True)],
    "squeeze": [C(arr(1, 3)), C(arr(1, 3, 1), 2)],
    "swapaxes": [C(arr(2, 3, 4), 0, 2)],
    "repeat": [C(arr(3), 2), C(arr(2, 3), [1, 2], axis=0)],
    "take": [C(arr(5), [0, 0, 3]), C(arr(2, 3), [2, 2], axis=1)],
    "item": [C(arr(2, 3), 4), C(arr(2, 3), 1, 2), C(arr(1))],
    "conj": [C(arr(3)), C(carr(3))],
    "conjugate": [C(arr(2, 2))],
}

ATTRIBUTE_SAMPLES: dict[str, list[Case]] = {
    "T": [C(arr(2, 3)), C(arr(2, 3, 4)), C(arr(3))],
    "mT": [C(arr(2, 3)), C(arr(2, 3, 4))],
    "real": [C(arr(2, 3)), C(carr(3))],
    "imag": [C(arr(2, 3)), C(carr(3))],
}

# Expected tie-splitting of max/min-type rules, checked exactly.
# Casts that round to fewer digits than a float64 finite difference can resolve (np.float32(x)): their
# derivative is the identity, checked on the cast that does not round. tests/test_syntax.py checks the dtypes.
ROUNDED = {"numpy.float32": np.float64, "numpy.float16": np.float64}

TIES = [
    ("numpy.max", (np.array([1.0, 3.0, 3.0, 2.0]),), {}, [0.0, 0.5, 0.5, 0.0]),
    ("numpy.min", (np.array([[1.0, 1.0], [0.0, 2.0]]),), {"axis": 1}, [[0.5, 0.5], [1.0, 0.0]]),
    ("numpy.amax", (np.array([2.0, 2.0, 2.0]),), {}, [1 / 3, 1 / 3, 1 / 3]),
    ("numpy.ptp", (np.array([1.0, 1.0, 4.0]),), {}, [-0.5, -0.5, 1.0]),
    ("numpy.linalg.norm", (np.array([-2.0, 1.0, 2.0]), np.inf), {}, [-0.5, 0.0, 0.5]),
    ("builtins.max", ([1.0, 3.0, 3.0],), {}, [0.0, 0.5, 0.5]),
]

# The samples of issue 13's families (factorizations, statistics, signal, assembly) live in their own module.
from rule_samples_numpy import numpy_samples  # noqa: E402
SAMPLES.update(numpy_samples())
# The rules of optional libraries (SciPy): tests/library_samples.py.
from library_samples import LIBRARY_SAMPLES  # noqa: E402

SAMPLES.update(LIBRARY_SAMPLES)
