"""Complex svd, eigh, eigvalsh, svdvals, the nuclear norm and max/min (docs/complex.md).

The singular vectors and eigenvectors are checked as NumPy returns them, phase
included (adsrc/rules/_phases.py: NumPy keeps one row of a factor real), so
the functions below may use their real and imaginary parts, not only their
absolute values. Each program is checked against central finite differences
in the real and the imaginary direction of every element, lazy and eager,
in forward mode and at second order (tests/gradcheck.py's check_complex), and
the pullbacks of the raw factors by the transpose pairing (check_complex_vjp).
"""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from adsrc.errors import InvalidArgument
from gradcheck import check_complex, check_complex_vjp

rng = np.random.default_rng(11)


def cmat(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


WIDE, TALL, SQUARE, STACK_WIDE, STACK_TALL = cmat(3, 5), cmat(5, 3), cmat(4, 4), cmat(2, 3, 4), cmat(2, 4, 3)


# ---- svd --------------------------------------------------------------------------------------
def svd_reduced(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    weights = np.arange(1.0, u.shape[-1] + 1)
    return (np.sum(np.real(u) * weights) + np.sum(np.imag(vh) ** 2) + np.sum(s * weights)
            + np.sum(np.abs(u[..., 0, :]) ** 3))


def svd_full_leading(a):
    u, s, vh = np.linalg.svd(a)
    k = s.shape[-1]
    return np.sum(np.imag(u[..., :k, :k]) * np.real(vh[..., :k, :k])) + np.sum(s ** 3)


def svd_values_only(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) ** 2 * np.arange(1.0, min(a.shape[-2:]) + 1))


@pytest.mark.parametrize("a", [WIDE, TALL, SQUARE, STACK_WIDE, STACK_TALL], ids=["wide", "tall", "square", "3d_wide",
                                                                           "3d_tall"])
@pytest.mark.parametrize("f", [svd_reduced, svd_full_leading, svd_values_only])
def test_svd_programs_first_and_second_order(f, a):
    check_complex(f, a)


def svd_flat(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.concatenate([np.ravel(u), np.ravel(s), np.ravel(vh)])


@pytest.mark.parametrize("a", [WIDE, TALL, SQUARE, STACK_TALL], ids=["wide", "tall", "square", "3d_tall"])
def test_vjp_of_svd_is_the_transpose(a):
    check_complex_vjp(svd_flat, a)


def svd_abs_like_autograd(a):
    """What autograd's test_svd_*_complex checks: functions that do not see the vectors' phases."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.abs(u) ** 2 * np.arange(u.shape[-1])) + np.sum(s) + np.sum(np.abs(vh[..., 0, :]))


def test_phase_free_functions_of_the_singular_vectors():
    check_complex(svd_abs_like_autograd, STACK_WIDE)


def svdvals_of(a):
    return np.sum(np.linalg.svdvals(a) * np.array([2.0, 1.0, 0.5]))


@pytest.mark.skipif(not hasattr(np.linalg, "svdvals"), reason="np.linalg.svdvals is NumPy 2")
def test_svdvals():
    check_complex(svdvals_of, TALL)
    u, s, vh = np.linalg.svd(TALL, full_matrices=False)
    np.testing.assert_allclose(adsrc.grad(svdvals_of)(TALL), np.conj((u * np.array([2.0, 1.0, 0.5])) @ vh))


def nuclear(a):
    return np.linalg.norm(a[0], ord="nuc") + np.sum(np.linalg.norm(a, ord="nuc", axis=(1, 2)))


def test_nuclear_norm_second_order():
    check_complex(nuclear, STACK_TALL)


def svd_of_square_u(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum(np.abs(u))


def test_zero_singular_value_of_a_complex_matrix_is_refused():
    """u_i's phase relative to v_i is undefined where s_i = 0 (for a square matrix too)."""
    singular = np.outer(cmat(3), cmat(3)) + np.outer(cmat(3), cmat(3))  # rank 2
    with pytest.raises(InvalidArgument, match="zero singular value"):
        adsrc.grad(svd_of_square_u)(singular)


def test_a_zero_in_the_real_row_is_refused():
    """Where the row NumPy keeps real has a zero, the phase NumPy picks is not continuous."""
    a = np.array([[0.0, 2.0j], [1.0j, 0.0]])
    _, _, vh = np.linalg.svd(a)
    assert np.min(np.abs(vh[:, 0])) < 1e-13  # the premise: V's first row has a zero
    with pytest.raises(InvalidArgument, match="real"):
        adsrc.grad(svd_of_square_u)(a)


def test_real_matrices_keep_real_gradients():
    a = np.real(TALL)
    g = adsrc.grad(svd_reduced)(a)
    assert np.isrealobj(g)
    np.testing.assert_allclose(g, np.real(adsrc.grad(svd_reduced)(a.astype(complex))), atol=1e-10)


def real_matrix_complex_downstream(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    w, v = np.linalg.eigh(a[:3, :3], "U")
    z = u * (1.0 + 2.0j) + 1j * np.sum(v * w)
    return np.sum(np.abs(z) ** 2 * np.real(z)) + np.sum(np.imag(vh * np.exp(1j * s[:, None])))


def test_real_matrix_with_complex_arithmetic_after_the_decomposition():
    """A real matrix's factors are real; the complex cotangents reaching svd and eigh follow the real formulas."""
    check_complex(real_matrix_complex_downstream, np.real(TALL))


# ---- eigh and eigvalsh ----------------------------------------------------------------------------
def eigh_lower(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w ** 2 * np.arange(1.0, w.shape[-1] + 1)) + np.sum(np.real(v) * np.imag(v[..., ::-1, :]))


def eigh_upper(a):
    w, v = np.linalg.eigh(a, "U")
    return np.sum(np.sin(w)) + np.sum(np.real(v[..., 0, :]) ** 3) + np.sum(np.abs(v) * np.imag(v))


def eigvalsh_both(a):
    return np.sum(np.linalg.eigvalsh(a) ** 3) + np.sum(np.linalg.eigvalsh(a, UPLO="U") * np.arange(a.shape[-1]))


HERMITIAN_ISH = cmat(4, 4)  # eigh reads one triangle: the other one, and the diagonal's imaginary part, are ignored
STACK = cmat(2, 3, 3)


@pytest.mark.parametrize("a", [HERMITIAN_ISH, STACK], ids=["2d", "3d"])
@pytest.mark.parametrize("f", [eigh_lower, eigh_upper, eigvalsh_both])
def test_eigh_programs_first_and_second_order(f, a):
    check_complex(f, a)


def eigh_flat(a):
    w, v = np.linalg.eigh(a, "U")
    return np.concatenate([w * 1.0, np.ravel(v)])


def test_vjp_of_eigh_is_the_transpose():
    check_complex_vjp(eigh_flat, HERMITIAN_ISH)


def test_eigh_gradient_lives_on_the_triangle_read():
    g = adsrc.grad(eigh_lower)(HERMITIAN_ISH)
    assert np.all(np.triu(g, 1) == 0)
    assert np.all(np.imag(np.diagonal(g)) == 0)  # NumPy reads the diagonal's real part only
    g = adsrc.grad(eigh_upper)(HERMITIAN_ISH)
    assert np.all(np.tril(g, -1) == 0)


# ---- max and min: NumPy orders complex numbers lexicographically ----------------------------------
Z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))


def extremes(z):
    top, bottom = np.max(z, axis=0), np.min(z)
    return np.sum(np.real(top) * np.imag(top)) + np.abs(bottom) ** 2 + np.real(np.ptp(z[0]) * 1j)


def test_max_and_min_of_complex_values():
    check_complex(extremes, Z)


def imag_of_max(z):
    return np.imag(np.max(z))


def test_max_picks_the_element_numpy_picks():
    """Equal real parts: the larger imaginary part wins (z[1]); an exact tie shares the cotangent."""
    z = np.array([1.0 + 2.0j, 1.0 + 3.0j, 0.5 + 9.0j])
    np.testing.assert_array_equal(adsrc.grad(imag_of_max)(z), [0.0, -1.0j, 0.0])
    np.testing.assert_array_equal(adsrc.grad(imag_of_max, eager=True)(z), [0.0, -1.0j, 0.0])
    tied = np.array([2.0 + 1.0j, 2.0 + 1.0j, 1.0 + 0.0j])
    np.testing.assert_array_equal(adsrc.grad(imag_of_max)(tied), [-0.5j, -0.5j, 0.0])
