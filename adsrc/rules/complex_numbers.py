"""Complex numbers: the rules of real, imag, conj, angle, abs and real_if_close,
and the list of rules that are correct for complex values.

The convention (docs/complex.md) is autograd's and JAX's: a vjp is the
*transpose* of the derivative, not its conjugate transpose. For a function
that is holomorphic in its argument (exp, sin, a product, a matrix product, a
reshape), the vjp is the same formula as for real numbers, with no conj
anywhere: ``vjp(g) = g * f'(x)``. For one that is not (``conj``, ``abs``,
``real``, ``angle``), write its derivative as ``dy = A dx + B conj(dx)``;
its vjp is ``A^T g + conj(B)^T conj(g)`` and its jvp ``A t + B conj(t)``.
The gradient of a real-valued ``f`` at a complex ``z = x + iy`` is then
``df/dx - i df/dy`` (for ``abs(z)**2``, ``2 conj(z)``).

The cotangent of a real value may carry an imaginary part (``x * 1j`` sends
``g * 1j`` back to a real ``x``); it carries no information, and is dropped
where the value is a differentiated argument, and read as ``np.real(g)`` by the
rules below whose result is real. Every rule not listed in :data:`COMPLEX_RULES`
(or marked here) refuses complex values when it runs (``registry.complex_error``):
comparisons (maximum, sort), cholesky, slogdet, qr, the math module.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

import operator

from . import (cumulative, decompositions, elementwise, factorizations, indexing, joins, linalg,  # noqa: F401
               nan_reductions, reductions, shape as _shape)
from . import iterables as _iterables
from .registry import allow_complex, defattribute, defjvp, deflinear, defvjp, lookup
from ._util import note, zero


def _is_complex(x) -> bool:
    return np.iscomplexobj(x)


def _real(g):
    """The cotangent of a real result, as a real value (its imaginary part, if any, carries nothing)."""
    return g.real if type(g) is complex else np.real(g) if np.iscomplexobj(g) else g


# ---- abs: |z| has dy = Re(conj(z) dz) / |z|, so vjp Re(g) conj(z) / |z| and jvp Re(conj(z) t) / |z| ----
def _abs_direction(ans, x):
    """d|x|: sign(x) for real x; conj(x) / |x| for complex x. 0 at 0 (the subgradient)."""
    if not _is_complex(x):
        return np.sign(x)
    return np.conj(x) / np.where(ans == 0, 1.0, ans)


def _abs_dx(g, ans, x):
    return _real(g) * _abs_direction(ans, x)


def _abs_jvp(t, ans, x):
    d = _abs_direction(ans, x)
    return np.real(d * t) if _is_complex(x) else t * d


for _abs in (np.absolute, builtins.abs):
    defvjp(_abs, _abs_dx)
    defjvp(_abs, _abs_jvp)  # not piecewise linear: for complex x the direction conj(x)/|x| varies with x
note("the subgradient at 0 is 0; for complex z, Re(g) conj(z) / |z|", lookup(np.absolute), lookup(builtins.abs))


# ---- real, imag, conj: R-linear ------------------------------------------------------
def _imag_dx(g, ans, x):
    """Im z = (z - conj z) / 2i: vjp -i Re(g) for complex z; a real x has imaginary part 0, a constant."""
    if not _is_complex(x):
        return np.zeros_like(_real(g)) if isinstance(g, np.ndarray) else 0.0 * _real(g)
    return -1j * _real(g)


deflinear(np.imag, _imag_dx)
defvjp(np.real, lambda g, ans, x: _real(g))
defjvp(np.real, lambda t, ans, x: np.real(t), piecewise_linear=True)


def real_attribute(x):
    """``x.real``: for an array, a view of the real parts; for a Python complex, a float."""
    return x.real


def imag_attribute(x):
    """``x.imag``: for a real array, zeros; for a Python float, 0.0."""
    return x.imag


defvjp(real_attribute, lambda g, ans, x: _real(g), name="real")
defjvp(real_attribute, lambda t, ans, x: np.real(t), piecewise_linear=True)
deflinear(imag_attribute, _imag_dx, name="imag")
defattribute("real", real_attribute, receivers="number")
defattribute("imag", imag_attribute, receivers="number")


# ---- angle: dθ = Im(conj(z) dz) / |z|^2 --------------------------------------------
def _angle_direction(x, deg):
    """-i conj(z) / |z|^2 (times 180/pi in degrees); 0 at 0, and for real x (the angle is 0 or pi)."""
    if not _is_complex(x):
        return np.zeros(np.shape(x), dtype=np.result_type(x, 1.0))
    r2 = np.real(x * np.conj(x))
    d = -1j * np.conj(x) / np.where(r2 == 0, 1.0, r2)
    return d * (180.0 / math.pi) if deg else d


def _angle_dz(g, ans, z, deg=False):
    return _real(g) * _angle_direction(z, deg)


def _angle_jvp(t, ans, z, deg=False):
    return np.real(_angle_direction(z, deg) * t)


defvjp(np.angle, _angle_dz)
defjvp(np.angle, _angle_jvp)
note("-i conj(z) / |z|^2 times Re(g); 0 at z == 0 and for real z (the angle is 0 or pi there)", lookup(np.angle))


# ---- real_if_close: the identity, or real part when the result was made real ----------
def _real_if_close_dx(g, ans, a, tol=100):
    return _real(g) if _is_complex(a) and not _is_complex(ans) else g


def _real_if_close_jvp(t, ans, a, tol=100):
    return np.real(t) if not _is_complex(ans) else t


defvjp(np.real_if_close, _real_if_close_dx)
defjvp(np.real_if_close, _real_if_close_jvp, piecewise_linear=True)
note("the identity; where the result was made real, the real part", lookup(np.real_if_close))

# ---- var and std: real results whose real formulas hold with conj(x) -----------------------
# var(z) = mean(|z - mean z|^2): its gradient is 2 conj(z - mean z) / (n - ddof), the real formula
# evaluated at conj(z) (times Re(g)); the tangent is the real part of the real formula's at conj(z).
def _spread_vjp(real_vjp):
    def vjp(g, ans, x, *args, **kwargs):
        if not _is_complex(x):
            return real_vjp(g, ans, x, *args, **kwargs)
        return real_vjp(_real(g), ans, np.conj(x), *args, **kwargs)
    vjp.__module__, vjp.__doc__ = real_vjp.__module__, real_vjp.__doc__
    return vjp


def _spread_jvp(real_jvp):
    def jvp(t, ans, x, *args, **kwargs):
        if not _is_complex(x):
            return real_jvp(t, ans, x, *args, **kwargs)
        return np.real(real_jvp(t, ans, np.conj(x), *args, **kwargs))
    jvp.__module__ = real_jvp.__module__
    return jvp


for _spread in (np.var, np.std, np.nanvar, np.nanstd):
    _rule = lookup(_spread)
    _notes = _rule.notes
    defvjp(_spread, _spread_vjp(_rule.vjps[0].__wrapped__))
    defjvp(_spread, _spread_jvp(_rule.jvps[0].__wrapped__))
    lookup(_spread).notes = _notes

# ---- the rules whose formulas hold for complex values as written (holomorphic or linear) ------
COMPLEX_RULES = [
    # elementwise
    np.add, np.subtract, np.multiply, np.divide, np.power, np.float_power, np.negative, np.positive,
    np.sqrt, np.square, np.reciprocal, np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p,
    np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh,
    np.arccosh, np.arctanh, np.where, np.conjugate,
    np.absolute, builtins.abs, np.imag, np.real, real_attribute, imag_attribute, np.angle, np.real_if_close,
    builtins.sum,
    # shape, layout and conversions
    np.reshape, np.ravel, _shape.flatten, np.transpose, np.swapaxes, np.moveaxis, np.rollaxis, np.expand_dims,
    np.squeeze, np.broadcast_to, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.array, np.asarray,
    np.asanyarray, np.ascontiguousarray, np.copy, _shape.astype, _shape.item, np.tile, np.repeat, np.flip,
    np.fliplr, np.flipud, np.rot90, np.roll, np.pad, np.full, np.full_like,
]
COMPLEX_RULES += [
    # reductions and scans
    np.sum, np.mean, np.prod, np.nansum, np.nanmean, np.nanprod, np.average, np.cumsum, np.cumprod, np.diff,
    np.var, np.std, np.nanvar, np.nanstd,
    # indexing, joining and splitting
    operator.getitem, np.take, np.take_along_axis,
    np.concatenate, np.stack, np.vstack, np.hstack, np.dstack, np.column_stack, np.append, np.split,
    np.array_split, np.hsplit, np.vsplit, np.dsplit,
    # products and contractions (no conjugation: vdot and vecdot conjugate their first argument)
    np.einsum, np.matmul, np.dot, np.inner, np.tensordot, np.outer, np.kron, np.linalg.multi_dot, np.trace,
    np.diagonal, np.diag, np.diagflat, np.triu, np.tril, np.cross,
    # matrix functions that are holomorphic
    np.linalg.inv, np.linalg.det, np.linalg.solve, np.linalg.matrix_power,
    # decompositions of complex matrices: real singular values and eigenvalues, vectors whose phases follow
    # NumPy's normalization (rules/_phases.py)
    np.linalg.svd, np.linalg.eigh, np.linalg.eigvalsh,
    # max and min pick an element (NumPy orders complex numbers lexicographically): the cotangent goes to it
    np.max, np.min, np.amax, np.amin, np.ptp,
]
_OPTIONAL = {np: ("cumulative_sum", "cumulative_prod", "unstack"),
             np.linalg: ("matmul", "trace", "diagonal", "cross", "outer", "tensordot")}
COMPLEX_RULES += [getattr(m, n) for m, names in _OPTIONAL.items() for n in names
                  if hasattr(m, n) and lookup(getattr(m, n)) is not None]
COMPLEX_RULES += [getattr(np, name) for name in ("astype", "matrix_transpose") if hasattr(np, name)]
if hasattr(np.linalg, "svdvals"):
    COMPLEX_RULES.append(np.linalg.svdvals)
if hasattr(np.linalg, "matrix_transpose"):
    COMPLEX_RULES.append(np.linalg.matrix_transpose)
COMPLEX_RULES.append(builtins.getattr)  # a field of a structure: structural, as getitem
COMPLEX_RULES += [f for f in (np.linalg.norm, getattr(np.linalg, "vector_norm", None),
                              getattr(np.linalg, "matrix_norm", None)) if f is not None]  # |x_i| as abs
# Python's containers and a dict's views: they move values, whatever their type
COMPLEX_RULES += [builtins.list, builtins.tuple, builtins.dict, _iterables.dict_with, _iterables.unpacked,
                  _iterables.dict_values, _iterables.dict_items, _iterables.dict_get]

allow_complex(*COMPLEX_RULES)

__all__ = ["COMPLEX_RULES", "real_attribute", "imag_attribute", "zero"]
