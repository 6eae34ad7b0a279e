"""The same gradient code on mutable arrays of other libraries: CuPy on a GPU, and DuckArray everywhere.

CuPy arrays live on the GPU and, unlike Dask arrays, can be written in place:
adsrc accumulates into a buffer it allocated in CuPy, copies what could alias
the user's arrays, and returns CuPy gradients. The CuPy tests need CuPy and a
GPU and are skipped, with the reason, without them. The same tests run on
every machine on ``DuckArray`` (tests/duck_array.py), a mutable array type
that implements only NumPy's dispatch protocols and cannot be converted to
NumPy implicitly, so they also check that adsrc never leaves the array's
library. Each gradient is compared with the NumPy gradient, which
test_dask.py checks against finite differences.
"""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from adsrc.values import AccThunk, Thunk, accumulate, unthunk, zero
from duck_array import DuckArray
from gradcheck import check
from test_dask import CASES


def _cupy_or_reason():
    try:
        import cupy
    except ImportError:
        return None, "CuPy is not installed (pip install 'adsrc[cupy]' on a machine with a CUDA GPU)"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, "CuPy found no GPU"
    except Exception as error:  # no driver, no device
        return None, f"CuPy cannot reach a GPU: {error}"
    return cupy, ""


cupy, NO_CUPY = _cupy_or_reason()


class Library:
    """How a test makes arrays of one library and reads them back."""

    def __init__(self, name, array_type, make, read):
        self.name, self.array_type, self.make, self.read = name, array_type, make, read


LIBRARIES = [
    pytest.param(Library("duck", DuckArray, DuckArray, lambda a: a.numpy()), id="duck"),
    pytest.param(Library("cupy", getattr(cupy, "ndarray", None), getattr(cupy, "asarray", None),
                         lambda a: cupy.asnumpy(a)),
                 id="cupy", marks=[pytest.mark.cupy, pytest.mark.skipif(cupy is None, reason=NO_CUPY or "-")]),
]


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("lib", LIBRARIES)
def test_gradients_stay_in_the_library_and_equal_numpys(lib, name, eager):
    func, values, chunks, wrt = CASES[name]
    expected_value, expected = adsrc.value_and_grad(func, wrt=wrt, eager=eager)(*values)
    arrays = tuple(v if c is None else lib.make(v) for v, c in zip(values, chunks))
    before = [lib.read(a) if isinstance(a, lib.array_type) else a for a in arrays]
    value, grads = adsrc.value_and_grad(func, wrt=wrt, eager=eager)(*arrays)
    np.testing.assert_allclose(lib.read(value), expected_value, rtol=1e-12)
    for g, want, i in zip(grads, expected, wrt):
        assert isinstance(g, lib.array_type), f"the gradient wrt argument {i} is a {type(g).__name__}"
        assert g.shape == np.shape(values[i])
        assert all(g is not a for a in arrays)
        np.testing.assert_allclose(lib.read(g), want, rtol=1e-10, atol=1e-12)
    for a, b in zip(arrays, before):
        if isinstance(a, lib.array_type):
            assert np.array_equal(lib.read(a), b), "adsrc wrote into an argument"


def _scale(g, factor):
    return g * factor


@pytest.mark.parametrize("lib", LIBRARIES)
def test_accumulation_adds_in_place_into_a_buffer_it_owns_never_into_a_contribution(lib):
    first, second, third = (lib.make(np.full(5, float(k))) for k in (1, 2, 3))
    acc = AccThunk()
    acc.add(first)
    acc.add(second)
    acc.compact()
    buffer = acc.buffer
    assert isinstance(buffer, lib.array_type) and buffer is not first and buffer is not second
    acc.add(Thunk(_scale, third, 2.0))
    total = unthunk(acc)
    assert total is buffer, "a mutable array's sum is added into the buffer adsrc allocated"
    np.testing.assert_array_equal(lib.read(total), np.full(5, 9.0))
    np.testing.assert_array_equal(lib.read(first), np.full(5, 1.0))
    np.testing.assert_array_equal(lib.read(second), np.full(5, 2.0))


@pytest.mark.parametrize("lib", LIBRARIES)
def test_accumulate_of_two_values_makes_a_new_array(lib):
    a, b = lib.make(np.ones(3)), lib.make(np.ones(3))
    total = accumulate(accumulate(zero, a), b)
    assert isinstance(total, lib.array_type) and total is not a and total is not b
    np.testing.assert_array_equal(lib.read(a), np.ones(3))


@pytest.mark.parametrize("lib", LIBRARIES)
def test_a_gradient_never_aliases_an_argument(lib):
    def identity_sum(x, y):
        return np.sum(x + 0.0 * y)

    x = lib.make(np.arange(3.0))
    dx, dy = adsrc.grad(identity_sum, wrt=(0, 1))(x, x)
    assert dx is not dy and dx is not x
    dx[0] = 7.0
    assert lib.read(dy)[0] == 0.0 and lib.read(x)[0] == 0.0


def test_cupy_is_skipped_with_a_reason_on_this_machine_or_runs():
    """Keeps the skip honest: without CuPy the reason says what is missing."""
    assert (cupy is None) == bool(NO_CUPY)


@pytest.mark.parametrize("lib", LIBRARIES)
def test_vjp_jvp_hessian_hvp_and_the_decorator(lib):
    from test_dask import DATA, N, entry_point_results

    wn, Xn, yn = DATA["w"], DATA["X"], DATA["y"]
    w, X, y = lib.make(wn), lib.make(Xn), lib.make(yn)
    cotangent = np.linspace(-1.0, 1.0, N)
    direction = np.arange(1.0, wn.size + 1.0)
    results = entry_point_results(w, X, y, lib.make(cotangent), lib.make(direction))
    expected = entry_point_results(wn, Xn, yn, cotangent, direction)
    for name, got in results.items():
        assert isinstance(got, lib.array_type), f"{name} gave a {type(got).__name__}"
        np.testing.assert_allclose(lib.read(got), expected[name], rtol=1e-10, atol=1e-12, err_msg=name)


# ---- every rule on a mutable, CuPy-like array: right or an error, never a different gradient ----------
# Rules whose vjp still makes NumPy data arrays from a shape (np.eye, np.zeros, np.add.at into NumPy...) and
# mixes them with the argument's arrays, which CuPy (and DuckArray) refuse with a TypeError.
ERRORS_ON_CUPY_LIKE = {
    "builtins.max", "builtins.min", "numpy.arange", "numpy.diff", "numpy.histogram", "numpy.linalg.cholesky",
    "numpy.linalg.det", "numpy.linalg.eigh", "numpy.linalg.eigvalsh", "numpy.linalg.matrix_norm",
    "numpy.linalg.matrix_power", "numpy.linalg.multi_dot", "numpy.linalg.norm", "numpy.linalg.slogdet",
    "numpy.linalg.solve", "numpy.linalg.svdvals", "numpy.linalg.trace", "numpy.linalg.vecdot", "numpy.linspace",
    "numpy.mean", "numpy.repeat", "numpy.sort", "numpy.trace", "numpy.unique", "numpy.vecdot",
    # Rules added after the survey, written for NumPy arrays: they make NumPy arrays and raise (docs/scaling.md).
    "adsrc.rules.assembly.index_concatenate", "numpy.block", "numpy.convolve", "numpy.corrcoef", "numpy.correlate",
    "numpy.cov", "numpy.geomspace", "numpy.gradient", "numpy.i0", "numpy.interp", "numpy.kaiser",
    "numpy.linalg.cond", "numpy.linalg.lstsq", "numpy.linalg.pinv", "numpy.linalg.qr", "numpy.linalg.svd",
    "numpy.linalg.tensorsolve", "numpy.logspace", "numpy.nanmedian", "numpy.nanpercentile", "numpy.nanquantile",
    "numpy.partition", "numpy.poly", "numpy.polyfit", "numpy.polymul", "numpy.polyval", "numpy.trapezoid",
    "numpy.unique_all", "numpy.unique_counts", "numpy.unique_inverse",
    "adsrc.rules.iterables.unpacked", "adsrc.rules.iterables.zipped_star", "adsrc.rules.iterables.zip_star",
    "builtins.list", "builtins.tuple",  # refuse iterating an unknown array type
    "functools.reduce", "numpy.absolute", "numpy.angle", "numpy.fft.hfft", "numpy.fft.irfft", "numpy.fft.irfft2", "numpy.fft.irfftn",
    # ufunc.outer through the ufunc's rule, which makes NumPy arrays for a 0-d operand
    "numpy.arctan2_outer", "numpy.float_power_outer", "numpy.fmax_outer", "numpy.fmin_outer", "numpy.fmod_outer",
    "numpy.hypot_outer", "numpy.logaddexp2_outer", "numpy.logaddexp_outer", "numpy.maximum_outer", "numpy.minimum_outer",
    "numpy.power_outer", "numpy.remainder_outer",
}
# np.full(shape, v) does not dispatch on v: for an array type without __array__ (DuckArray, unlike CuPy and
# Dask) NumPy builds an object array, whose gradient adsrc does not define. Not a rule of CuPy's concern.
NOT_DISPATCHED = {"numpy.full"}


def _leaves(value, lib):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v, lib)]
    return [lib.read(value) if isinstance(value, lib.array_type) else value]


def _to_lib(value, lib):
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.ndim >= 1:
        return lib.make(value)
    if isinstance(value, dict):
        return {k: _to_lib(v, lib) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_to_lib(v, lib) for v in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)  # NamedTuples too
    return value


def _rule_names():
    import test_rules

    return sorted(set(test_rules.RULES) - NOT_DISPATCHED)


@pytest.mark.parametrize("name", _rule_names())
@pytest.mark.parametrize("lib", LIBRARIES)
def test_every_rule_gives_numpys_gradient_or_an_error(lib, name):
    from test_rules import RULES, SAMPLES, call_vjp, cotangent, positions, seed_of

    rule = RULES[name]
    errors = []
    for i, case in enumerate(SAMPLES.get(name, [])):
        rng = np.random.default_rng(seed_of(f"{name}{i}"))
        args, kwargs = case.draw(rng)
        ans = rule.func(*args, **kwargs)
        g = cotangent(ans, rng)
        lib_args, lib_g = _to_lib(args, lib), _to_lib(g, lib)
        for p in positions(rule.vjps, case, args):
            expected = _leaves(call_vjp(rule.vjps[p], g, ans, args, kwargs), lib)
            try:
                got = _leaves(call_vjp(rule.vjps[p], lib_g, rule.func(*lib_args, **kwargs), lib_args, kwargs), lib)
            except Exception as error:  # refused: not a wrong gradient
                errors.append(f"{name}[{i}] argument {p}: {type(error).__name__}: {error}")
                continue
            assert len(got) == len(expected), f"{name}[{i}] argument {p}"
            for a, b in zip(got, expected):
                if a is zero or b is zero:
                    assert a is b or not np.any(a if b is zero else b), f"{name}[{i}] argument {p}"
                    continue
                np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-10,
                                           atol=1e-12, err_msg=f"{name}[{i}] argument {p}")
    if lib.name == "duck" and name not in ERRORS_ON_CUPY_LIKE and not name.startswith("scipy."):  # (no dispatch)
        assert not errors, errors[:3]


@pytest.mark.parametrize("lib", LIBRARIES)
def test_the_example_gives_numpys_gradients_in_the_library(lib):
    """examples/cupy_mlp.py's computation, smaller; on DuckArray everywhere, on CuPy where there is a GPU."""
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
    import cupy_mlp

    params, X, Y = cupy_mlp.problem(n=64, d=8, h=16, k=3)
    value, grads, kinds = cupy_mlp.gradients_on(lib.make, lib.read, params, X, Y)
    assert kinds == {f"{lib.array_type.__module__.split('.')[0]}.{lib.array_type.__name__}"}
    expected_value, expected = adsrc.value_and_grad(cupy_mlp.loss)(params, X, Y)
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    for name in params:
        np.testing.assert_allclose(grads[name], expected[name], rtol=1e-10, atol=1e-12, err_msg=name)
    def flat_loss(W1, b1, W2, b2, X, Y):
        return cupy_mlp.loss({"W1": W1, "b1": b1, "W2": W2, "b2": b2}, X, Y)

    # and the NumPy gradient against finite differences
    fd = check(flat_loss, params["W1"], params["b1"], params["W2"], params["b2"], X, Y, wrt=(0, 1, 2, 3))
    for name, g in zip(("W1", "b1", "W2", "b2"), fd):
        np.testing.assert_allclose(expected[name], g, rtol=1e-12)


@pytest.mark.skipif(cupy is None, reason=NO_CUPY or "-")
@pytest.mark.cupy
def test_the_cupy_example_runs_on_the_gpu():
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, os.path.join(root, "examples", "cupy_mlp.py")], capture_output=True,
                         text=True, timeout=300, cwd=root)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "NumPy gives the same gradients" in out.stdout
