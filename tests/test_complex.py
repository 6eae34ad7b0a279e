"""Complex differentiation (docs/complex.md).

1. Generated from the registry: every rule marked complex-correct, at every
   sample of tests/rule_samples.py moved into the complex plane (all float
   arguments, or only the first, so that mixed real and complex operands are
   covered), is checked against central finite differences along the real
   and the imaginary axis of each element: its vjps by the transpose pairing
   Re(sum(vjp(g) * v)) == Re(sum(g * J v)), its jvps directly.
2. Every other rule refuses a complex argument or result, in both modes, with
   an InvalidArgument, where NumPy itself accepts the complex call.
3. Whole programs through adsrc.grad (lazy and eager), adsrc.vjp, adsrc.jvp and
   second order, with tests/gradcheck.py's complex checks: abs, angle, real,
   imag, conj, the FFT family, mixed real and complex arguments, and the
   errors that name the line.
"""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import adsrc
import adsrc.rules as builtin
from adsrc.errors import InvalidArgument
from gradcheck import check_complex, check_complex_vjp
from rule_samples import SAMPLES
from test_forward import check_jvp
from test_rules import call_vjp, check_against_fd, cotangent, is_float_like, positions

RULES = {rule.qualname: rule for rule in builtin.builtin_rules()}


# ---- 1. generated: complex-correct rules at complex points --------------------------------
def _complexify(value, rng, state):
    """``value`` with its floats moved off the real axis (by up to 0.5i, so that samples kept inside a
    domain, like log's positive numbers, stay away from the branch cuts). ``state["left"]`` counts how
    many float arguments may still be moved."""
    if isinstance(value, list):
        return [_complexify(v, rng, state) for v in value]
    if isinstance(value, tuple):
        items = [_complexify(v, rng, state) for v in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)  # NamedTuples too
    if isinstance(value, dict):
        return {k: _complexify(v, rng, state) for k, v in value.items()}
    if isinstance(value, (bool, np.bool_)) or not is_float_like(value) or np.iscomplexobj(value):
        return value
    if state["left"] == 0:
        return value
    state["left"] -= 1
    moved = value + 1j * rng.uniform(-0.5, 0.5, np.shape(value))
    if isinstance(value, np.ndarray):
        return np.asarray(moved)
    return complex(moved)


class Complexified:
    """A sample case whose float arguments (all of them, or only the first) are made complex."""

    def __init__(self, case, only_first: bool):
        self.case, self.only_first, self.wrt = case, only_first, case.wrt

    def draw(self, rng):
        args, kwargs = self.case.draw(rng)
        state = {"left": 1 if self.only_first else -1}
        return _complexify(tuple(args), rng, state), kwargs


def _runs(func, case, seed) -> bool:
    """Whether NumPy itself accepts the complex call (rfft, cbrt and the math module do not)."""
    args, kwargs = case.draw(np.random.default_rng(seed))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            func(*args, **kwargs)
    except Exception:
        return False
    return True


# Complex-correct rules whose function computes a wrong value when only its first argument is complex: the
# rule refuses that mix instead (SciPy's solve_sylvester with a complex a and a real b; test_scipy.py).
WRONG_WHEN_MIXED = {"scipy.linalg.solve_sylvester"}


def _complex_cases(ok: bool):
    out = []
    for name, rule in RULES.items():
        if rule.complex_ok != ok:
            continue
        for i, case in enumerate(SAMPLES.get(name, [])):
            for only_first in (False, True) if name not in WRONG_WHEN_MIXED else (False,):
                label = f"{name}[{i}]{'first' if only_first else 'all'}"
                complexified = Complexified(case, only_first)
                if _runs(rule.func, complexified, zlib.crc32(label.encode())):
                    out.append(pytest.param(name, i, only_first, id=label))
    return out


COMPLEX_CASES = _complex_cases(True)
REFUSED_CASES = _complex_cases(False)


@pytest.mark.parametrize("name,i,only_first", COMPLEX_CASES)
def test_complex_rule_matches_finite_differences(name, i, only_first):
    rule = RULES[name]
    label = f"{name}[{i}]{'first' if only_first else 'all'}"
    case = Complexified(SAMPLES[name][i], only_first)
    with np.errstate(all="ignore"):
        check_against_fd(rule.func, rule.vjps, case, zlib.crc32(label.encode()), label)


@pytest.mark.parametrize("name,i,only_first", COMPLEX_CASES)
def test_complex_jvp_matches_finite_differences(name, i, only_first):
    rule = RULES[name]
    label = f"{name}[{i}]{'first' if only_first else 'all'}"
    case = Complexified(SAMPLES[name][i], only_first)
    with np.errstate(all="ignore"):
        check_jvp(rule.func, rule, case, zlib.crc32(("jvp" + label).encode()), label)


def test_complex_rules_are_covered():
    """The common families are complex-correct, and every one of them is exercised at complex points."""
    checked = {p.values[0] for p in COMPLEX_CASES}
    complex_ok = {name for name, rule in RULES.items() if rule.complex_ok}
    assert len(complex_ok) >= 120, len(complex_ok)
    real_input = {"numpy.fft.rfft", "numpy.fft.rfft2", "numpy.fft.rfftn", "numpy.fft.ihfft"}  # NumPy refuses complex
    untested = sorted(complex_ok - checked - real_input)
    assert not untested, f"complex-correct rules with no complex sample: {untested}"
    for name in ("numpy.multiply", "numpy.exp", "numpy.matmul", "numpy.einsum", "numpy.sum", "numpy.absolute",
                 "operator.getitem", "numpy.concatenate", "numpy.reshape", "numpy.fft.fft", "numpy.fft.irfftn",
                 "numpy.angle", "numpy.linalg.solve"):
        assert name in complex_ok, name


# ---- 2. generated: every other rule refuses complex values ------------------------------
@pytest.mark.parametrize("name,i,only_first", REFUSED_CASES)
def test_other_rules_refuse_complex_values(name, i, only_first):
    rule = RULES[name]
    label = f"{name}[{i}]{'first' if only_first else 'all'}"
    rng = np.random.default_rng(zlib.crc32(label.encode()))
    args, kwargs = Complexified(SAMPLES[name][i], only_first).draw(rng)
    with np.errstate(all="ignore"):
        ans = rule.func(*args, **kwargs)
    g = cotangent(ans, rng)
    for p in positions(rule.vjps, SAMPLES[name][i], args):
        with pytest.raises(InvalidArgument, match="real values only"):
            call_vjp(rule.vjps[p], g, ans, args, kwargs)
        if p < len(rule.jvps) and rule.jvps[p] is not None:
            with pytest.raises(InvalidArgument, match="real values only"):
                rule.jvps[p](args[p], ans, *args, **kwargs)


def test_refusals_cover_the_real_only_families():
    refused = {p.values[0] for p in REFUSED_CASES}
    for name in ("numpy.maximum", "numpy.sort", "numpy.nanmax", "numpy.linalg.slogdet",
                 "numpy.linalg.cholesky", "numpy.clip"):
        assert name in refused, name


# ---- 3. whole programs ------------------------------------------------------------------
rng = np.random.default_rng(7)
Z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
ZV = rng.standard_normal(5) + 1j * rng.standard_normal(5)
XV = rng.standard_normal(5)
M = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)) + 3 * np.eye(3)


def abs_squared(z):
    return np.abs(z) ** 2


def test_abs_squared_is_twice_the_conjugate():
    """docs/complex.md's worked example: the gradient of |z|^2 is 2 conj(z)."""
    z = 3.0 + 4.0j
    assert adsrc.grad(abs_squared)(z) == pytest.approx(6.0 - 8.0j)
    assert type(adsrc.grad(abs_squared)(z)) is complex
    got = adsrc.grad(lambda w: np.sum(abs_squared(w)))(ZV)  # noqa: E731
    np.testing.assert_allclose(got, 2 * np.conj(ZV))


def angle_of(z):
    return np.angle(z)


def abs_of(z):
    return np.abs(z)


def sum_real(x):
    return np.sum(np.real(x))


@pytest.mark.parametrize("f,z", [(angle_of, 0.3 + 0.8j), (angle_of, 0.7), (abs_of, 1.1 + 1.2j), (abs_of, 1.1),
                                 (abs_squared, -0.4 + 2.0j)])
def test_scalar_functions_first_and_second_order(f, z):
    check_complex(f, z)


def test_real_and_real_if_close_keep_the_argument_type():
    assert np.isrealobj(adsrc.grad(sum_real)(2.0))
    assert np.iscomplexobj(adsrc.grad(sum_real)(1.0j))
    assert adsrc.grad(sum_real)(1.0j) == 1.0


def mixed(x, z):
    y = x * z + np.exp(1j * x)
    return np.sum(np.real(y * np.conj(z))) + np.sum(np.imag(np.sin(y)) ** 2)


def test_mixed_real_and_complex_arguments():
    check_complex(mixed, XV, ZV, wrt=(0, 1))


def attributes(z):
    w = z.conj() * z.real + z.imag * 2.0j
    return np.sum(np.abs(w)) + abs(z[0])


def test_attributes_and_methods():
    check_complex(attributes, ZV)


def matrices(a, b):
    c = a @ b + np.linalg.solve(a, b.T) + np.einsum("ij,jk->ik", a, np.linalg.inv(a))
    return np.sum(np.abs(c * np.conj(c))) + np.real(np.linalg.det(a)) + np.mean(np.angle(c[0]))


def test_matrix_products_solve_inverse_and_det():
    check_complex(matrices, M, np.conj(M.T) + 1.0, wrt=(0, 1))


def loop(z, n):
    acc = 0.0 + 0.0j
    for k in range(n):
        acc = acc + z[k % 3] * np.exp(1j * k * z)
    return np.sum(np.abs(acc) ** 2)


def test_a_loop_with_lazy_accumulation():
    check_complex(loop, ZV[:3] * 0.3, 40)


def spectrum_power(x):
    spectrum = np.fft.fft(x, n=8, norm="ortho")
    return np.sum(np.abs(spectrum) ** 2 * np.arange(8.0))


def filtered(x):
    half = np.fft.rfft(x)
    back = np.fft.irfft(half * np.exp(-np.arange(half.shape[0]) * 0.5), n=x.shape[0])
    return np.sum(back ** 3)


def shifted_2d(z):
    f = np.fft.fftshift(np.fft.fft2(z), axes=(0, 1))
    g = np.fft.ifftn(np.fft.ifftshift(f * np.conj(f)), s=(4, 5), axes=(0, 1))
    return np.sum(np.real(g) * np.arange(5.0)) + np.sum(np.imag(np.fft.hfft(z[0], n=6)))


def real_nd(x):
    return np.sum(np.abs(np.fft.irfftn(np.fft.rfftn(x, axes=(0, 1)) ** 2, s=x.shape[:2], axes=(0, 1))))


@pytest.mark.parametrize("f,x", [(spectrum_power, XV), (spectrum_power, ZV), (filtered, XV),
                                 (shifted_2d, Z), (real_nd, Z.real + 2.0)])
def test_fft_programs(f, x):
    check_complex(f, x)


def ifft_of(z):
    return np.fft.ifft(z * 2.0, n=7)


def rfft2_of(x):
    return np.fft.rfft2(x, s=(3, 6))


def conj_product(z, w):
    return np.conj(z) * w + np.imag(w)


@pytest.mark.parametrize("f,args,wrt", [(ifft_of, (ZV,), 0), (rfft2_of, (Z.real,), 0),
                                        (conj_product, (ZV, ZV[::-1].copy()), (0, 1))])
def test_vjp_of_complex_outputs_is_the_transpose(f, args, wrt):
    check_complex_vjp(f, *args, wrt=wrt)


def uses_maximum(z):
    return np.sum(np.real(np.maximum(z, 0.5)))


def test_a_real_only_rule_refuses_complex_values_naming_the_line():
    with pytest.raises(InvalidArgument, match="maximum") as info:
        adsrc.grad(uses_maximum)(ZV)
    assert "test_complex.py" in str(info.value) + "".join(getattr(info.value, "__notes__", []))
    with pytest.raises(InvalidArgument, match="maximum"):
        adsrc.jvp(uses_maximum, (ZV,), (ZV,))


def complex_output(z):
    return np.sum(z * z)


def test_grad_needs_a_real_output():
    from adsrc.errors import NonScalarOutput
    with pytest.raises(NonScalarOutput, match="real"):
        adsrc.grad(complex_output)(ZV)


def eig_parts(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(w) ** 2) + np.sum(np.real(w) * np.abs(v[0]) ** 3) + np.sum(np.abs(v) ** 2 * np.arange(3.0))


def eigenvalues_squared(a):
    return np.real(np.sum(np.linalg.eigvals(a) ** 2 * np.array([1.0, 2.0, 3.0])))


@pytest.mark.parametrize("a", [np.array([[0.5, -2.0, 0.3], [1.5, 0.2, -0.4], [0.1, 0.6, 1.1]]),
                               M * 0.5 + np.diag([0.0, 1.0, 2.0])])
@pytest.mark.parametrize("f", [eig_parts, eigenvalues_squared])
def test_eig_and_eigvals_first_and_second_order(f, a):
    check_complex(f, a)


@pytest.mark.parametrize("a", [np.array([[0.5, -2.0, 0.3], [1.5, 0.2, -0.4], [0.1, 0.6, 1.1]]), M])
def test_vjp_of_eig_is_the_transpose(a):
    check_complex_vjp(eig_output_flat, a)


def eig_output_flat(a):
    w, v = np.linalg.eig(a)
    return np.concatenate([w * 2.0, np.ravel(v)])


def eig_of_repeated(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(v))


def test_eig_at_repeated_eigenvalues_is_refused():
    with pytest.raises(InvalidArgument, match="repeat"):
        adsrc.grad(eig_of_repeated)(np.eye(3))


def eigh_both(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w ** 2) + np.sum(v[0] ** 3)


def test_second_order_adds_the_cotangents_of_a_tuple_result():
    # The adjoint adds the cotangents of eigh's two outputs (TangentTuple + TangentTuple, item by item);
    # second order used to take that sum for a tuple concatenation.
    a = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, -1.0]])
    check_complex(eigh_both, a)


def uses_sort(z):
    return np.sum(np.abs(np.sort(z * 2.0)))  # np.sort is written for real values only


def test_second_order_refuses_a_real_only_rule_at_complex_values():
    with pytest.raises(InvalidArgument, match="real values only"):
        adsrc.jvp(adsrc.grad(uses_sort), (ZV,), (ZV,))
    with pytest.raises(InvalidArgument, match="real values only"):
        adsrc.hvp(uses_sort)(ZV, ZV)


def spread(z):
    return np.var(z) + np.std(z[:3], ddof=1) + np.sum(np.var(np.reshape(z, (1, 5)), axis=0) * np.arange(5.0))


def test_var_and_std_of_complex_values():
    """var(z) = mean(|z - mean z|^2): gradient 2 conj(z - mean z) / (n - ddof)."""
    check_complex(spread, ZV)
    got = adsrc.grad(lambda_free_var)(ZV)
    np.testing.assert_allclose(got, 2 * np.conj(ZV - ZV.mean()) / ZV.size)


def lambda_free_var(z):
    return np.var(z)
