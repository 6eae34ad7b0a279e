"""Every function issue 13 lists, in a small user program, differentiated in both modes and twice.

One table, ``PROGRAMS``: a program per listed function (or spelling of it),
with arguments written as Python expressions. Each program is checked with
``adsrc.check_grads`` (forward and reverse mode, first and second order,
against central finite differences in float64), lazy and eager, and its
inputs must come back unchanged. ``test_cli`` writes every program to a file
and runs ``python -m adsrc grad`` on one program per family, checking the
printed gradient against finite differences, and ``adsrc dump`` in both modes
on a few. SciPy's programs are skipped when SciPy is not installed; programs
adsrc refuses (``REFUSED``) are marked xfail(strict=True) with the reason.
"""
from __future__ import annotations

import inspect
import operator
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import adsrc
from adsrc.errors import AdsrcError, NoGradientRule
from gradcheck import numerical_grad

try:
    import scipy.linalg as sla
    import scipy.special as sp
    from scipy import stats
except ImportError:  # the SciPy programs are skipped
    sla = sp = stats = None

HEADER = """\
import operator

import numpy as np

try:
    import scipy.linalg as sla
    import scipy.special as sp
    from scipy import stats
except ImportError:
    sla = sp = stats = None
"""

C3 = np.array([0.7, -1.3, 0.4])  # fixed weights, so that no output is a trivial sum


# -- numpy.linalg ----------------------------------------------------------------------------------

def svd_full(a, b):
    u, s, vt = np.linalg.svd(a, full_matrices=True)  # a is 3x2: u's last column completes a basis, no derivative
    w, t, wt = np.linalg.svd(b)  # square: full is reduced
    return (np.sum(u[:, :2] ** 2 * np.arange(6.0).reshape(3, 2)) + np.sum(s ** 3) + np.sum(vt ** 2 * np.eye(2))
            + np.sum(w ** 2 * np.arange(9.0).reshape(3, 3)) + np.sum(np.log(t)) + np.sum((wt * wt) @ C3))


def svd_reduced(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(u ** 2 * C3[:2]) + np.sum(np.log(s)) + np.sum((vt * vt) @ C3)


def svd_values_only(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) ** 3)


def qr_reduced(a):
    q, r = np.linalg.qr(a)
    return np.sum(q * np.arange(6.0).reshape(3, 2)) + np.sum(r ** 2 * np.triu(np.ones((2, 2))))


def qr_square(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(q @ C3) + np.sum(np.diag(r) ** 3)


def eig_real(a):
    w, v = np.linalg.eig(a)  # distinct real eigenvalues; |v| does not depend on the eigenvectors' signs
    return np.sum(np.real(w) ** 3) + np.sum(np.abs(v) ** 2 * np.arange(9.0).reshape(3, 3))


def eig_complex(a):
    w, v = np.linalg.eig(a)  # a complex pair of eigenvalues
    return np.sum(np.real(w) ** 2 - 0.5 * np.imag(w) ** 2) + np.sum(np.abs(v) ** 2 * np.array([1.0, 2.0]))


def eigvals_(a):
    return np.sum(np.abs(np.linalg.eigvals(a)) ** 2)


def pinv_(a):
    return np.sum(np.linalg.pinv(a) * np.arange(6.0).reshape(2, 3))


def lstsq_(a, b):
    x, residuals, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(x ** 2) + np.sum(residuals) + np.sum(sv)


def matrix_power_(a):
    return np.sum(np.linalg.matrix_power(a, 3)) + np.sum(np.linalg.matrix_power(a, -2)) + np.sum(
        np.linalg.matrix_power(a, 0))


def multi_dot_(a, b, c):
    return np.sum(np.linalg.multi_dot([a, b, c])) + np.linalg.multi_dot([C3, b.T, a.T, C3])


# -- numpy.fft -------------------------------------------------------------------------------------

def fft_ifft(x):
    z = np.fft.fft(x)
    y = np.fft.ifft(z * np.arange(1.0, 5.0))
    return np.sum(np.real(z) * np.arange(4.0)) + np.sum(np.imag(z) ** 2) + np.sum(np.abs(y) ** 2)


def rfft_irfft(x):
    z = np.fft.rfft(x)
    y = np.fft.irfft(z * (1.0 + 0.5j * np.arange(3.0)), n=4)
    return np.sum(np.abs(z) ** 2 * np.arange(3.0)) + np.sum(y ** 3) + np.sum(np.fft.irfft(z) * x)


def hfft_ihfft(x):
    h = np.fft.hfft(x * (1.0 + 0.3j))
    return np.sum(h * np.arange(4.0)) + np.sum(np.abs(np.fft.ihfft(x * x)) ** 2)


def fft2_forms(x):
    a = np.fft.fft2(x)
    b = np.fft.ifft2(a * x)
    c = np.fft.rfft2(x)
    d = np.fft.irfft2(c * c, s=x.shape)
    return np.sum(np.abs(a) * x) + np.sum(np.real(b)) + np.sum(np.abs(c) ** 2) + np.sum(d * x)


def fftn_forms(x):
    a = np.fft.fftn(x, axes=(0, 1))
    b = np.fft.ifftn(a ** 2)
    c = np.fft.rfftn(x)
    d = np.fft.irfftn(c * np.conj(c), s=x.shape)
    return np.sum(np.real(b) * x) + np.sum(d ** 2) + np.sum(np.imag(a) ** 2)


def fftshift_(x):
    return np.sum(np.fft.fftshift(x) * np.arange(6.0).reshape(2, 3)) + np.sum(
        np.fft.ifftshift(x * x, axes=1) * np.arange(6.0).reshape(2, 3)) + np.sum(np.fft.fftshift(x, axes=0) ** 3)


# -- convolution, interpolation, order statistics --------------------------------------------------

def convolve_modes(a, v):
    return (np.sum(np.convolve(a, v) ** 2) + np.sum(np.convolve(a, v, mode="same") * np.arange(5.0))
            + np.sum(np.convolve(v, a, "valid") ** 3))


def correlate_modes(a, v):
    return (np.sum(np.correlate(a, v, mode="full") ** 2) + np.sum(np.correlate(a, v, "same") * np.arange(5.0))
            + np.sum(np.correlate(a, v) ** 3))


def interp_(x, fp):
    xp = np.array([0.0, 0.5, 1.5, 2.0])
    return np.sum(np.interp(x, xp, fp) ** 2) + np.sum(np.interp(x, xp, fp, left=-1.0, right=3.0) * x)


def median_(x):
    return np.median(x) + np.sum(np.median(x.reshape(2, 3), axis=0) ** 2) + np.sum(np.median(x[:4]) * x)


def percentile_(x):
    return np.percentile(x, 30.0) + np.sum(np.percentile(x.reshape(2, 3), [10.0, 75.0], axis=1) ** 2)


def quantile_(x):
    return np.quantile(x, 0.3) + np.sum(np.quantile(x.reshape(3, 2), [0.25, 0.9], axis=0) ** 2)


def nan_reductions(x):
    y = np.where(np.arange(6) == 2, np.nan, x)  # one missing value
    return (np.nansum(y * y) + np.nanmean(y) + np.nanprod(y) + np.nanmax(y) + np.nanmin(y) + np.nanstd(y)
            + np.nanvar(y) + np.nanmedian(y) + np.nanpercentile(y, 40.0) + np.nanquantile(y, 0.7)
            + np.sum(np.nancumsum(y) ** 2) + np.sum(np.nancumprod(y)))


def trapezoid_(y, x):
    return np.trapezoid(y ** 2, x) + np.trapezoid(y, dx=0.5) + np.trapezoid(y)


def polyval_(p, x):
    return np.sum(np.polyval(p, x) ** 2)


def gradient_(f):
    g = np.gradient(f)
    g2 = np.gradient(f, 0.5, edge_order=2)
    gx, gy = np.gradient(f.reshape(2, 3))
    return np.sum(g ** 2) + np.sum(g2 * np.arange(6.0)) + np.sum(gx * gy) + np.sum(np.gradient(f.reshape(2, 3), axis=1) ** 3)


def select_(x, y):
    return np.sum(np.select([x < 0.0, x > 1.0], [x * y, y ** 2], default=x) ** 2)


def partition_(x):
    p = np.partition(x, 2)
    return np.sum(p * np.arange(6.0)) + np.sum(np.partition(x.reshape(2, 3), 1, axis=1)[:, 1] ** 2)


def cov_corrcoef(x):
    return np.sum(np.cov(x) * np.arange(4.0).reshape(2, 2)) + np.sum(np.corrcoef(x) ** 2) + np.cov(x[0], x[1])[0, 1]


def meshgrid_(x, y):
    a, b = np.meshgrid(x, y)
    c, d = np.meshgrid(x, y, indexing="ij")
    return np.sum(a * b ** 2) + np.sum(np.sin(c) * d)


def row_stack_(x, y):
    return np.sum(np.row_stack([x, y, x * y]) * np.arange(9.0).reshape(3, 3))


def r_and_c(x, y):
    return np.sum(np.r_[x, y] * np.arange(6.0)) + np.sum(np.c_[x, y] ** 2 * np.arange(6.0).reshape(3, 2)) + np.sum(
        np.r_[x, 2.0, y] ** 3)


# -- ufunc methods ----------------------------------------------------------------------------------

def add_at(x):
    buf = np.zeros(4)
    np.add.at(buf, np.array([0, 2, 0, 3]), x)  # repeated indices add up
    return np.sum(buf ** 2 * np.arange(1.0, 5.0))


def subtract_at_in_a_loop(x):
    buf = np.ones((2, 3))
    for k in range(2):
        np.subtract.at(buf, (np.array([0, 1, 0]), np.array([2, 2, 2])), x[k] * x)  # a 2-D index, repeated
    return np.sum(buf ** 3)


def ufunc_reduce(x):
    return (np.sum(np.add.reduce(x, axis=0) ** 2) + np.multiply.reduce(x.ravel()) + np.sum(
        np.maximum.reduce(x, axis=1)) + np.sum(np.minimum.reduce(x) ** 2))


def ufunc_accumulate(x):
    return (np.sum(np.add.accumulate(x) ** 2) + np.sum(np.multiply.accumulate(x, axis=1))
            + np.sum(np.maximum.accumulate(x.ravel()) * np.arange(6.0)))


def ufunc_outer(x, y):
    return (np.sum(np.add.outer(x, y) ** 2) + np.sum(np.multiply.outer(x, y) * np.arange(6.0).reshape(3, 2))
            + np.sum(np.subtract.outer(x, y) ** 3) + np.sum(np.power.outer(x * x + 1.0, y)))


# -- complex parts ---------------------------------------------------------------------------------

def complex_parts(x, y):
    z = x + 1j * y
    w = z * z
    return (np.sum(np.angle(z)) + np.sum(np.real(w) ** 2) + np.sum(np.imag(w) * x) + np.sum(np.real(np.conj(w) * z))
            + np.sum(np.angle(x)) + np.sum(np.real(x) + np.imag(x) + np.conj(x)))


def real_if_close_(x):
    z = np.fft.ifft(np.fft.fft(x))  # imaginary parts zero up to rounding
    return np.sum(np.real_if_close(z) ** 2) + np.sum(np.real_if_close(x) * x)


# -- einsum ------------------------------------------------------------------------------------------

def einsum_forms(a, b):
    return (np.sum(np.einsum("ij,jk->ik", a, b)) + np.einsum("ii", a @ b) + np.sum(np.einsum("ii->i", b @ a) ** 2)
            + np.einsum("ij,ij", a, a) + np.sum(np.einsum("ij,jk", a, b) ** 2) + np.sum(np.einsum("i,j->ij", a[0], b[1]))
            + np.sum(np.einsum("ji", a) * np.arange(6.0).reshape(3, 2)))


def einsum_ellipsis(a, b):
    x = a.reshape(2, 1, 3)
    return (np.sum(np.einsum("...ij,...jk->...ik", x, b) ** 2) + np.sum(np.einsum("...i->...", a) ** 2)
            + np.sum(np.einsum("i...->...", b) * np.arange(6.0).reshape(3, 2)))


def einsum_sublist(a, b):
    return (np.sum(np.einsum(a, [0, 1], b, [1, 2], [0, 2]) ** 2) + np.einsum(a, [0, 1], a, [0, 1])
            + np.sum(np.einsum(b, [Ellipsis, 0], [Ellipsis]) ** 2))


# -- Python: operator functions, constructors, casts, size-1 outputs -----------------------------------

def operator_functions(x, y):
    total = operator.add(x, y) * operator.mul(x, y) - operator.sub(x, y) + operator.truediv(x, y + 3.0)
    total = total + operator.pow(x, 2.0) + operator.neg(y) + operator.pos(x) + operator.abs(y) + operator.mod(x, 2.5)
    for op in (operator.add, operator.mul):  # as function objects
        total = total + op(x, y)
    return np.sum(total) + operator.matmul(x, y) + np.sum(operator.getitem(x, 1))


def function_passed_in(f, x):
    return np.sum(f(x) * x) + np.sum(np.tanh(f(x)) ** 2)


def constructors(x, y):
    rows = tuple(x.reshape(2, 2))
    items = list(np.sin(v) for v in x)
    named = dict(a=x, b=y)
    pairs = dict(zip(["p", "q"], [y, x[1]]))
    replaced = dict([("p", y * y), ("q", x[0])], q=2.0)  # the keyword replaces q's pair: x[0] is not read
    merged = dict([("a", x[2])], b=y * x[3])
    return np.sum(rows[0] * rows[1]) + sum(items) + np.sum(named["a"] * named["b"]) + pairs["p"] * pairs["q"] + sum(
        tuple([y, y * y])) + sum(list(x)) + replaced["p"] * replaced["q"] + merged["a"] * merged["b"]


def scalar_casts(x, y):
    return np.float64(np.sum(x)) * np.float64(y) + float(np.float64(y) ** 2) + np.sum(np.float64(x) * x)


def size_one_output(x):
    return np.sum(x * x, keepdims=True)


def size_one_matrix(x):
    return (x @ x).reshape(1, 1)


# -- scipy.special ---------------------------------------------------------------------------------

def special_logistic(x):
    return np.sum(sp.expit(x) ** 2) + np.sum(sp.logit(sp.expit(x) * 0.9 + 0.05))


def special_erf(x):
    return np.sum(sp.erf(x) * x) + np.sum(sp.erfc(x) ** 2) + np.sum(sp.erfinv(x * 0.5))


def special_gamma(x):
    return np.sum(sp.gamma(x + 2.0)) + np.sum(sp.gammaln(x + 2.0) ** 2) + np.sum(sp.digamma(x + 2.0) * x) + np.sum(
        sp.polygamma(1, x + 2.0)) + np.sum(sp.polygamma(2, x + 3.0) * x)


def special_beta(a, b):
    return np.sum(sp.beta(a, b)) + np.sum(sp.betaln(a, b) ** 2)


def special_xlogy(x, y):
    return np.sum(sp.xlogy(x, y)) + np.sum(sp.xlog1py(x, y) ** 2)


def special_softmax(x):
    return (sp.logsumexp(x) + np.sum(sp.logsumexp(x.reshape(2, 3), axis=1) ** 2) + sp.logsumexp(x, b=np.arange(1.0, 7.0))
            + np.sum(sp.softmax(x) * np.arange(6.0)) + np.sum(sp.log_softmax(x.reshape(2, 3), axis=0) ** 2))


# -- scipy.stats -----------------------------------------------------------------------------------

def stats_norm(x, loc, scale):
    return np.sum(stats.norm.logpdf(x, loc, scale) + stats.norm.pdf(x, loc=loc, scale=scale)
                  + stats.norm.cdf(x, loc, scale) + stats.norm.logcdf(x, loc, scale))


def stats_t(x, df, loc, scale):
    return np.sum(stats.t.logpdf(x, df, loc, scale) + stats.t.pdf(x, df, loc, scale)) + np.sum(
        stats.t.cdf(x, 4.0, loc, scale) + stats.t.logcdf(x, 4.0, loc, scale))


def stats_gamma(x, a, scale):
    return np.sum(stats.gamma.logpdf(x, a, scale=scale) + stats.gamma.pdf(x, a, scale=scale)) + np.sum(
        stats.gamma.cdf(x, 2.5, scale=scale) + stats.gamma.logcdf(x, 2.5, scale=scale))


def stats_beta(x, a, b):
    return np.sum(stats.beta.logpdf(x, a, b) + stats.beta.pdf(x, a, b)) + np.sum(
        stats.beta.cdf(x, 2.0, 3.0) + stats.beta.logcdf(x, 2.0, 3.0))


def stats_poisson(mu):
    k = np.array([0, 2, 5])
    return np.sum(stats.poisson.logpmf(k, mu) + stats.poisson.pmf(k, mu) + stats.poisson.cdf(k, mu)
                  + stats.poisson.logcdf(k, mu))


def stats_mvn_density(x, mean, half):
    cov = half @ half.T + np.eye(2)
    return np.sum(stats.multivariate_normal.logpdf(x, mean, cov)) + np.sum(
        stats.multivariate_normal.pdf(x, mean=mean, cov=cov))


def stats_mvn_cdf(x, mean):
    cov = np.array([[1.0, 0.3], [0.3, 2.0]])
    return np.sum(stats.multivariate_normal.cdf(x, mean, cov)) + np.sum(stats.multivariate_normal.logcdf(x, mean, cov))


# -- scipy.linalg ----------------------------------------------------------------------------------

def linalg_triangular(a, b):
    m = a + 3.0 * np.eye(3)
    return (np.sum(sla.solve_triangular(m, b, lower=True) ** 2) + np.sum(sla.solve_triangular(m, b) * C3[:, None])
            + np.sum(sla.solve_triangular(m, b, trans="T", lower=True)))


def linalg_cholesky(a, b):
    m = a @ a.T + 2.0 * np.eye(3)
    return (np.sum(sla.cho_solve(sla.cho_factor(m), b) ** 2) + np.sum(sla.cholesky(m) * np.arange(9.0).reshape(3, 3))
            + np.sum(sla.cholesky(m, lower=True) ** 2 * C3) + np.sum(sla.cho_factor(m, lower=True)[0] * np.tril(np.ones((3, 3)))))


def linalg_lu(a, b):
    m = a + 3.0 * np.eye(3)
    return np.sum(sla.lu_solve(sla.lu_factor(m), b) ** 2) + np.sum(sla.lu_solve(sla.lu_factor(m), b, trans=1) * C3)


def linalg_dense(a, b):
    m = a + 3.0 * np.eye(3)
    s = m + m.T
    w, v = sla.eigh(s)
    return (np.sum(sla.expm(0.3 * a)) + np.sum(sla.solve(m, b) ** 2) + np.sum(sla.inv(m) * np.arange(9.0).reshape(3, 3))
            + sla.det(m) + np.sum(w ** 3) + np.sum(v ** 2 * np.arange(9.0).reshape(3, 3)) + np.sum(
                sla.eigh(s, eigvals_only=True) * C3))


# -- the table ---------------------------------------------------------------------------------------

MATRIX32 = "np.array([[0.9, -0.4], [0.3, 1.2], [-0.7, 0.5]])"
MATRIX33 = "np.array([[1.1, 0.3, -0.2], [0.4, -0.8, 0.5], [0.1, 0.6, 2.1]])"
VECTOR6 = "np.array([0.31, -0.72, 1.13, 0.54, -0.25, 0.86])"

# (program, its arguments as a Python expression, needs SciPy)
PROGRAMS = [
    (svd_full, f"{MATRIX32}, {MATRIX33}", False),
    (svd_reduced, f"{MATRIX32}.T", False),
    (svd_values_only, MATRIX32, False),
    (qr_reduced, MATRIX32, False),
    (qr_square, MATRIX33, False),
    (eig_real, MATRIX33, False),
    (eig_complex, "np.array([[0.5, -2.0], [1.5, 0.3]])", False),
    (eigvals_, "np.array([[0.5, -2.0], [1.5, 0.3]])", False),
    (pinv_, MATRIX32, False),
    (lstsq_, f"{MATRIX32}, np.array([0.3, -1.0, 0.8])", False),
    (matrix_power_, MATRIX33, False),
    (multi_dot_, f"{MATRIX33}, {MATRIX33}.T * 0.5, np.ones((3, 2)) * 0.3", False),
    (fft_ifft, "np.array([0.3, -0.7, 1.1, 0.4])", False),
    (rfft_irfft, "np.array([0.3, -0.7, 1.1, 0.4])", False),
    (hfft_ihfft, "np.array([0.3, -0.7, 1.1])", False),
    (fft2_forms, "np.array([[0.3, -0.7, 1.1, 0.2], [0.4, 0.9, -0.5, 0.6]])", False),
    (fftn_forms, "np.array([[[0.3, -0.7], [1.1, 0.2]], [[0.4, 0.9], [-0.5, 0.6]]])", False),
    (fftshift_, f"{VECTOR6}.reshape(2, 3)", False),
    (convolve_modes, "np.array([0.3, -0.7, 1.1, 0.4, 0.8]), np.array([0.5, -0.2, 0.9])", False),
    (correlate_modes, "np.array([0.3, -0.7, 1.1, 0.4, 0.8]), np.array([0.5, -0.2, 0.9])", False),
    (interp_, "np.array([-0.2, 0.3, 0.9, 1.7, 2.4]), np.array([1.0, -0.5, 0.7, 2.0])", False),
    (median_, VECTOR6, False),
    (percentile_, VECTOR6, False),
    (quantile_, VECTOR6, False),
    (nan_reductions, VECTOR6, False),
    (trapezoid_, "np.array([0.3, -0.7, 1.1, 0.4]), np.array([0.0, 0.4, 1.1, 1.5])", False),
    (polyval_, "np.array([0.5, -1.2, 0.3]), np.array([0.2, -0.9, 1.4])", False),
    (gradient_, VECTOR6, False),
    (select_, "np.array([-0.5, 0.3, 1.4, 0.8]), np.array([0.6, -1.1, 0.2, 0.9])", False),
    (partition_, VECTOR6, False),
    (cov_corrcoef, f"{VECTOR6}.reshape(2, 3)", False),
    (meshgrid_, "np.array([0.3, -0.7, 1.1]), np.array([0.5, -0.2])", False),
    (row_stack_, "np.array([0.3, -0.7, 1.1]), np.array([0.5, -0.2, 0.9])", False),
    (r_and_c, "np.array([0.3, -0.7, 1.1]), np.array([0.5, -0.2, 0.9])", False),
    (add_at, "np.array([0.3, -0.7, 1.1, 0.4])", False),
    (subtract_at_in_a_loop, "np.array([0.3, -0.7, 1.1])", False),
    (ufunc_reduce, f"{VECTOR6}.reshape(2, 3)", False),
    (ufunc_accumulate, f"{VECTOR6}.reshape(2, 3)", False),
    (ufunc_outer, "np.array([0.3, -0.7, 1.1]), np.array([0.5, -0.2])", False),
    (complex_parts, "np.array([0.3, -0.7, 1.1]), np.array([0.5, -0.2, 0.9])", False),
    (real_if_close_, "np.array([0.3, -0.7, 1.1, 0.4])", False),
    (einsum_forms, f"{MATRIX32}.T, {MATRIX32}", False),
    (einsum_ellipsis, f"{MATRIX32}.T, {MATRIX32}", False),
    (einsum_sublist, f"{MATRIX32}.T, {MATRIX32}", False),
    (operator_functions, "np.array([0.3, -0.7, 1.1]), np.array([0.5, -0.2, 0.9])", False),
    (function_passed_in, "np.sin, np.array([0.3, -0.7, 1.1])", False),
    (constructors, "np.array([0.3, -0.7, 1.1, 0.4]), 0.6", False),
    (scalar_casts, "np.array([0.3, -0.7, 1.1]), 0.6", False),
    (size_one_output, "np.array([0.3, -0.7, 1.1])", False),
    (size_one_matrix, "np.array([0.3, -0.7, 1.1])", False),
    (special_logistic, VECTOR6, True),
    (special_erf, VECTOR6, True),
    (special_gamma, VECTOR6, True),
    (special_beta, "np.array([0.7, 1.5, 2.2]), np.array([1.3, 0.8, 3.1])", True),
    (special_xlogy, "np.array([0.7, -1.5, 2.2]), np.array([1.3, 0.8, 3.1])", True),
    (special_softmax, VECTOR6, True),
    (stats_norm, "np.array([0.3, -0.7, 1.1]), 0.2, 1.3", True),
    (stats_t, "np.array([0.3, -0.7, 1.1]), 3.5, 0.2, 1.3", True),
    (stats_gamma, "np.array([0.3, 0.7, 2.1]), 2.5, 1.3", True),
    (stats_beta, "np.array([0.3, 0.55, 0.8]), 2.5, 1.7", True),
    (stats_poisson, "1.7", True),
    (stats_mvn_density, "np.array([[0.3, -0.7], [1.1, 0.2]]), np.array([0.1, -0.3]), np.array([[0.9, 0.2], [-0.4, 0.7]])",
     True),
    (stats_mvn_cdf, "np.array([[0.3, -0.7], [1.1, 0.2]]), np.array([0.1, -0.3])", True),
    (linalg_triangular, f"{MATRIX33}, np.array([[0.3, -1.0], [0.8, 0.2], [-0.5, 1.1]])", True),
    (linalg_cholesky, f"{MATRIX33}, np.array([0.3, -1.0, 0.8])", True),
    (linalg_lu, f"{MATRIX33}, np.array([0.3, -1.0, 0.8])", True),
    (linalg_dense, f"{MATRIX33} * 0.5, np.array([0.3, -1.0, 0.8])", True),
]

# Programs that adsrc refuses for now, with the reason; each test of them is xfail(strict=True).
REFUSED: dict[str, str] = {
    "stats_mvn_cdf": "multivariate_normal.cdf and .logcdf have no rule: SciPy computes them by randomized numerical "
                     "integration (accurate to about 1e-5), so neither their derivative nor a finite-difference check "
                     "of it is available; refused with NoGradientRule naming the call",
}


def arguments(text):
    return eval(f"({text},)", {"np": np})


def cases():
    for func, text, needs_scipy in PROGRAMS:
        marks = [pytest.mark.xfail(strict=True, reason=REFUSED[func.__name__])] if func.__name__ in REFUSED else []
        yield pytest.param(func, text, needs_scipy, id=func.__name__, marks=marks)


def copies(args):
    return [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
@pytest.mark.parametrize("func,text,needs_scipy", list(cases()))
def test_both_modes_and_second_order(func, text, needs_scipy, eager):
    if needs_scipy:
        pytest.importorskip("scipy")
    args = arguments(text)
    before = copies(args)
    with adsrc.eager_unthunk(eager):
        adsrc.check_grads(func, args, order=2, modes=("fwd", "rev"))
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b, err_msg="adsrc changed an input")


@pytest.mark.parametrize("func,text,needs_scipy", list(cases()))
def test_gradient_against_finite_differences(func, text, needs_scipy):
    """adsrc.grad itself (not only vjp), lazy and eager, every float argument against finite differences."""
    if needs_scipy:
        pytest.importorskip("scipy")
    args = arguments(text)
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray)))

    def scalar(*a):
        return np.sum(func(*a))

    for eager in (False, True):
        grads = adsrc.grad(func, wrt=wrt, eager=eager)(*args)
        for k, i in enumerate(wrt):
            np.testing.assert_allclose(grads[k], numerical_grad(scalar, args, i), rtol=1e-5, atol=1e-6,
                                       err_msg=f"argument {i}, eager={eager}")


# -- the command line ----------------------------------------------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|nan|inf", re.IGNORECASE)


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "adsrc", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=env)


def printed_blocks(stdout):
    """``label = numbers`` blocks of ``adsrc grad``'s output, as flat float arrays by label."""
    blocks, label = {}, None
    for line in stdout.splitlines():
        head, sep, rest = line.partition(" =")
        if sep and re.fullmatch(r"[\w/\[\]().]+", head):
            label = head
            blocks[label] = []
            line = rest
        if label is not None:
            blocks[label] += [float(n) for n in NUMBER.findall(line)]
    return {k: np.array(v) for k, v in blocks.items()}


@pytest.fixture(scope="module")
def program_file(tmp_path_factory):
    directory = tmp_path_factory.mktemp("issue13")
    path = directory / "listed.py"
    functions = "\n\n".join(inspect.getsource(func) for func, _, _ in PROGRAMS)
    constants = f"C3 = np.array({C3.tolist()})\n"
    path.write_text(HEADER + "\n" + constants + "\n\n" + functions)
    return path


# The command line runs a subprocess per call: one program per family (all of them pass; this keeps it quick).
CLI_PROGRAMS = {"svd_full", "qr_reduced", "eig_complex", "lstsq_", "fft2_forms", "hfft_ihfft", "convolve_modes",
                "interp_", "nan_reductions", "gradient_", "r_and_c", "add_at", "ufunc_accumulate", "ufunc_outer",
                "complex_parts", "einsum_sublist", "operator_functions", "constructors", "size_one_output",
                "special_softmax", "stats_norm", "stats_mvn_density", "stats_mvn_cdf", "linalg_dense"}
DUMPED = {"add_at", "einsum_sublist", "operator_functions", "stats_norm", "linalg_dense"}  # dump, both modes


@pytest.mark.parametrize("func,text,needs_scipy", [c for c in cases() if c.id in CLI_PROGRAMS])
def test_cli(program_file, func, text, needs_scipy):
    if needs_scipy:
        pytest.importorskip("scipy")
    args = arguments(text)
    wrt = [i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray))]
    target = f"{program_file}:{func.__name__}"
    out = run_cli("grad", target, "--args", text, "--wrt", ",".join(map(str, wrt)))
    assert out.returncode == 0, out.stderr
    blocks = printed_blocks(out.stdout)
    np.testing.assert_allclose(blocks["value"], np.ravel(func(*args)), rtol=1e-6, atol=1e-8)

    def scalar(*a):
        return np.sum(func(*a))

    names = list(inspect.signature(func).parameters)
    for i in wrt:
        printed = blocks[f"d{func.__name__}/d{names[i]}"]
        np.testing.assert_allclose(printed, np.ravel(numerical_grad(scalar, args, i)), rtol=1e-5, atol=1e-6,
                                   err_msg=f"argument {i}")
    for mode in ("reverse", "forward") if func.__name__ in DUMPED else ():
        dump = run_cli("dump", target, "--mode", mode, "--wrt", ",".join(map(str, wrt)))
        assert dump.returncode == 0, dump.stderr
        compile(dump.stdout, "<dump>", "exec")


# -- writes: np.add.at into an input runs as Python's (tests/test_writes_fresh.py has the rest) ----------

def add_at_into_input(buf, x):
    np.add.at(buf, np.array([0, 1, 0]), x)
    return np.sum(buf ** 2)


def test_add_at_into_an_input_changes_it_as_python_does():
    buf, x = np.array([0.5, 1.0, -0.3]), np.array([0.3, -0.7, 1.1])
    after = buf.copy()
    value = add_at_into_input(after, x)
    for eager in (False, True):
        given = buf.copy()
        got, (dbuf, dx) = adsrc.value_and_grad(add_at_into_input, wrt=(0, 1), eager=eager)(given, x)
        assert got == value
        np.testing.assert_array_equal(given, after)
        on_copies = lambda b, v: add_at_into_input(b.copy(), v)  # noqa: E731
        np.testing.assert_allclose(dbuf, numerical_grad(on_copies, (buf, x), 0), rtol=1e-6)
        np.testing.assert_allclose(dx, numerical_grad(on_copies, (buf, x), 1), rtol=1e-6)


def test_multivariate_normal_cdf_is_refused_naming_the_call():
    pytest.importorskip("scipy")
    args = arguments([t for f, t, _ in PROGRAMS if f is stats_mvn_cdf][0])
    for derivative in (adsrc.grad(stats_mvn_cdf), lambda *a: adsrc.jvp(stats_mvn_cdf, a, a)):
        with pytest.raises(NoGradientRule, match=r"test_issue13_listed.py:\d+:\d+: no gradient rule for .*cdf"):
            derivative(*args)


def test_size_one_outputs_are_gradients_of_scalars():
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(adsrc.grad(size_one_output)(x), 2.0 * x)
    np.testing.assert_allclose(adsrc.grad(size_one_matrix)(x), 2.0 * x)
    np.testing.assert_allclose(adsrc.hessian(size_one_output)(x), 2.0 * np.eye(3))

