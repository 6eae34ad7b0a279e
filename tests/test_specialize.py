"""Specialized adjoints (optimize/specialize.py, backend/specialized.py): the adjoint rewritten for the
kinds of a call's arguments gives the generic adjoint's value bit for bit and its gradients (bit for bit
where the summation order is the same: eager mode, and scalars in both modes), and agrees with central
finite differences in lazy and eager mode.
"""
from __future__ import annotations

import math
import os
import random
import subprocess
import sys

import numpy as np
import pytest

import adsrc
from adsrc.backend.pipeline import EAGER, REVERSE, compile as compiled
from adsrc.backend.specialized import MAX_SIGNATURES
from gradcheck import check
from sources import function_from_source
from test_properties import load_module, make_batch, arguments

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def value_and_grads(f, args, wrt, eager, specialize):
    saved = adsrc.config.specialize
    adsrc.config.specialize = specialize
    try:
        return adsrc.value_and_grad(f, wrt=wrt, eager=eager)(*args)
    finally:
        adsrc.config.specialize = saved


def same(a, b):
    """Equal bit for bit (NaN equal to NaN), and of the same type."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and np.array_equal(a, b, equal_nan=True)


def compare(f, args, wrt, exact_lazy=True):
    """The specialized and the generic adjoint agree: the value bit for bit, eager gradients bit for bit,
    lazy ones bit for bit (``exact_lazy``) or to rounding (lazy fusion may sum in another order)."""
    for eager in (False, True):
        special = value_and_grads(f, args, wrt, eager, True)
        generic = value_and_grads(f, args, wrt, eager, False)
        assert same(special[0], generic[0]), (eager, special[0], generic[0])
        if eager or exact_lazy:
            assert same(special[1], generic[1]), (eager, special[1], generic[1])
        else:
            for a, b in zip(special[1], generic[1]):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-300)


def specialized_source(f, args, wrt=0, eager=False):
    return adsrc.adjoint_source(f, wrt, eager=eager, args=args)


# ---- Python floats: math and NumPy on scalars --------------------------------------------------
def chain_math(x, n):
    y = x
    for _ in range(n):
        y = math.sin(y) * 0.5 + x
    return y


def chain_numpy(x, n):
    y = x
    for _ in range(n):
        y = np.sin(y) * 0.5 + x
    return y


def mixed(x, y):
    a = math.exp(-x * x) + math.cos(y) * x
    b = np.tanh(a) - y / 3.0
    c = -b * math.atan(x) + np.exp(b) ** 2
    if x > 0:
        c = c * x - math.sinh(y)
    return c * a + 2.0 * math.tanh(c)


def loop_of_both(x, y, n):
    s = 0.0
    for k in range(n):
        s = s + math.cos(x * k) * y - np.sin(s) / (k + 1)
        x, y = y * 0.9, x - 0.1
    return s


def powers(x, y):
    return x ** 2 + y ** 3 * x - (x * y) ** 2 + math.sqrt(x * x + 1.0)


SCALAR_PROGRAMS = [
    (chain_math, (0.3, 50), 0),
    (chain_numpy, (0.3, 50), 0),
    (mixed, (0.7, -0.4), (0, 1)),
    (mixed, (-0.7, 0.4), (0, 1)),
    (loop_of_both, (0.3, 0.8, 7), (0, 1)),
    (powers, (0.6, -1.3), (0, 1)),
]


@pytest.mark.parametrize("f, args, wrt", SCALAR_PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_scalar_programs(f, args, wrt):
    assert "specialized for" in specialized_source(f, args, wrt)
    compare(f, args, wrt)
    check(f, *args, wrt=wrt, rtol=1e-6, atol=1e-8)


def test_scalar_chain_reads_like_hand_written_code():
    for f in (chain_math, chain_numpy):
        for eager in (False, True):
            source = specialized_source(f, (0.3, 10), eager=eager)
            backward = source.split("def pullback", 1)[1]
            assert "rule_vjp" not in source and "Thunk" not in source and "accumulate" not in source
            assert source.count("tape.append") == 1  # one push per iteration, of y alone
            assert "tape.append(y)" in source
            module = "math" if f is chain_math else "np"
            assert f"dy = dy * 0.5 * {module}.cos(y_prev)" in backward  # the temporaries folded back; y before the line
            assert f"y = {module}.sin(y) * 0.5 + x" in source.split("def pullback", 1)[0]
            assert "dx = dx + dy" in backward


def test_arrays_of_known_shapes():
    def accumulate_sums(v, c):
        s = 0.0
        for ci in c:
            s = s + np.sum(v * ci)
        return s

    def regression(w, x):
        return np.sum(w @ x) + np.linalg.norm(w)

    r = np.random.default_rng(1)
    v, c = r.standard_normal(8), r.standard_normal(30)
    source = specialized_source(accumulate_sums, (v, c))
    assert "np.full((8,), ds)" in source and "tape.append(ci)" in source and "Thunk" not in source
    compare(accumulate_sums, (v, c), 0, exact_lazy=False)
    check(accumulate_sums, v, c, rtol=1e-6)
    w, x = r.standard_normal((2, 4)), r.standard_normal((4, 5))
    source = specialized_source(regression, (w, x))
    assert "np.full((2, 5), dsum_w_at_x_plus_norm_w) @ x.T" in source and "rule_vjp" not in source
    compare(regression, (w, x), 0, exact_lazy=False)
    check(regression, w, x, rtol=1e-6)


# ---- random programs ---------------------------------------------------------------------------
@pytest.mark.parametrize("batch", [0, 1])
def test_random_programs_agree_with_the_generic_adjoint(batch, tmp_path):
    """progen's smooth programs of (x vector, W matrix, s float, n int): specialized == generic."""
    programs = make_batch(batch)
    source = "\n\n".join(p[1] for p in programs)
    from progen import MODULE_HEADER
    module = load_module(tmp_path / f"spec_{batch}.py", f"spec_{batch}", MODULE_HEADER + source)
    compared = 0
    for k, (name, _, dim) in enumerate(programs):
        f = getattr(module, name)
        args = arguments(batch * 1000 + k, dim, 2)
        with np.errstate(all="ignore"):
            try:
                value = f(*args)
            except Exception:
                continue
        if not np.isfinite(value):
            continue
        compare(f, args, (0, 1, 2), exact_lazy=False)
        compared += 1
    assert compared > len(programs) // 2


def test_random_scalar_programs():
    """Random straight-line and looping programs of Python floats, math and NumPy: specialized == generic
    bit for bit (scalars are added at once in lazy mode too), and finite differences."""
    rng = random.Random(11)
    unary = ["math.sin({})", "math.cos({})", "math.tanh({})", "np.sin({})", "np.cos({})", "np.tanh({})",
             "math.exp(-({}) ** 2)", "-{}", "math.atan({})", "np.exp({} * 0.1)"]
    binary = ["{} + {}", "{} - {}", "{} * {}", "{} * 0.5 + {}", "{} / (1.5 + {} ** 2)"]
    for trial in range(25):
        names = ["x", "y"]
        lines = []
        for i in range(rng.randint(2, 7)):
            if rng.random() < 0.5:
                expr = rng.choice(unary).format(rng.choice(names))
            else:
                expr = rng.choice(binary).format(rng.choice(names), rng.choice(names))
            lines.append(f"t{i} = {expr}")
            names.append(f"t{i}")
        body = "\n".join("        " + line for line in lines) if trial % 2 else "\n".join(
            "    " + line for line in lines)
        loop = "    for _ in range(n):\n" if trial % 2 else ""
        text = f"def prog(x, y, n):\n{loop}{body}\n" + (
            f"        x, y = {names[-1]} * 0.5, x\n" if trial % 2 else "") + f"    return {names[-1]} + x * y\n"
        f = function_from_source(text, "prog", f"<random scalar program {trial}>")
        args = (rng.uniform(-1, 1), rng.uniform(-1, 1), 3)
        compare(f, args, (0, 1))
        check(f, *args, wrt=(0, 1), rtol=1e-5, atol=1e-7)


def _straight_line_program(rng, statements, name):
    """A long straight-line function of a vector x and a float w (benchmarks/workloads.py's kind), with
    random unary functions, scalar factors and reads of earlier lines."""
    unary = ["np.tanh({})", "np.sin({})", "np.cos({})", "np.exp(-{})", "-{}"]
    lines = [f"def {name}(x, w):", "    y0 = x * w"]
    for i in range(1, statements):
        a, b = f"y{i - 1}", f"y{rng.randrange(i)}"
        expr = rng.choice([f"{rng.choice(unary).format(a)} * w + x", f"{rng.choice(unary).format(a)} + {b}",
                           f"w * {a} - {b} * 0.5", f"{a} * {b} * 0.25 + w"])
        lines.append(f"    y{i} = {expr}")
    lines.append(f"    return np.sum(y{statements - 1}) * w")
    return function_from_source("\n".join(lines) + "\n", name, f"<random straight-line program {name}>")


@pytest.mark.parametrize("statements, shape", [(12, (16,)), (180, (16,)), (400, (16,)), (60, (4, 5))])
def test_long_straight_line_programs(statements, shape):
    """Long functions are specialized too (no statement limit): the specialized adjoint agrees with the
    generic one (bit for bit in eager mode) and with finite differences, in both modes; a float factor's
    gradient is a sum of products (np.add.reduce for a vector, np.sum for more axes), not a vjp call."""
    rng = random.Random(statements)
    f = _straight_line_program(rng, statements, f"straight_{statements}")
    r = np.random.default_rng(statements)
    args = (r.standard_normal(shape) * 0.3, 0.45)
    for eager in (False, True):
        source = specialized_source(f, args, (0, 1), eager=eager)
        assert f"specialized for x: float64{list(shape)}, w: float" in source
        summed = "np.add.reduce(dy" if len(shape) == 1 else "np.sum(dy"
        assert "rule_vjp" not in source and summed in source
    compare(f, args, (0, 1), exact_lazy=False)
    check(f, *args, wrt=(0, 1), rtol=1e-5, atol=1e-8)  # both modes


def test_generic_adjoint_built_when_first_read():
    """The generic adjoint of a specializable function is finished and loaded only when it is read or run:
    a call with argument kinds runs the specialized one; a call without (a list) and the source build it."""
    def f(x, w):
        return np.sum(np.tanh(x) * w)

    x = np.linspace(-1.0, 1.0, 5)
    entry = compiled(f, (0, 1), REVERSE)
    assert "_build" in vars(entry)
    np.testing.assert_allclose(adsrc.grad(f, wrt=(0, 1))(x, 0.5)[1], np.sum(np.tanh(x)), rtol=1e-14)
    assert "_build" in vars(entry)  # the specialized adjoint ran
    assert "rule_vjp" in entry.source and "_build" not in vars(entry)
    np.testing.assert_allclose(adsrc.grad(f)(list(x), 0.5), 0.5 * (1 - np.tanh(x) ** 2), rtol=1e-14)


# ---- the guard and the cache -------------------------------------------------------------------
def test_each_signature_has_its_own_specialization():
    def f(x):
        return np.sum(np.sin(x) * x)

    df = adsrc.grad(f)
    for x in (0.5, np.array([0.5, 1.0]), np.float64(0.5), np.ones((2, 2)), 0.25):
        expected = np.cos(x) * x + np.sin(x)
        np.testing.assert_allclose(df(x), expected, rtol=1e-14)
    entry = compiled(f, (0,), REVERSE)
    assert 3 <= len(entry.specialized) <= 4  # float, float64[2], float64, float64[2, 2]


def test_signatures_are_bounded():
    def f(x):
        return np.sum(x * x)

    df = adsrc.grad(f)
    for n in range(1, MAX_SIGNATURES + 5):
        x = np.arange(float(n))
        np.testing.assert_array_equal(df(x), 2 * x)
    assert len(compiled(f, (0,), REVERSE).specialized) == MAX_SIGNATURES


def test_eager_switch_is_respected():
    def f(x):
        return math.sin(x) * x

    with adsrc.eager_unthunk():
        adsrc.grad(f)(0.5)
    assert compiled(f, (0,), EAGER).specialized  # the eager adjoint was specialized, not the lazy one
    assert not compiled(f, (0,), REVERSE).specialized


def test_specialization_off():
    def f(x):
        return math.sin(x) * x

    saved = adsrc.config.specialize
    adsrc.config.specialize = False
    try:
        assert adsrc.grad(f)(0.5) == math.cos(0.5) * 0.5 + math.sin(0.5)
    finally:
        adsrc.config.specialize = saved
    assert not compiled(f, (0,), REVERSE).specialized


# ---- what the kinds must not guess --------------------------------------------------------------
def test_integer_sized_arrays():
    def f(x, n):
        return np.sum(np.ones(n) * x) + np.sum(np.arange(n) * x)

    for n in (2, 3, 5):
        compare(f, (0.5, n), 0)
        assert adsrc.grad(f)(0.5, n) == n + sum(range(n))


def test_power_of_a_negative_python_float():
    def f(x, p):
        return (x - 1.0) ** p + x

    for eager in (False, True):
        assert value_and_grads(f, (3.0, 0.5), 0, eager, True) == value_and_grads(f, (3.0, 0.5), 0, eager, False)
        with pytest.raises(Exception) as special:
            value_and_grads(f, (0.0, 0.5), 0, eager, True)  # (-1.0) ** 0.5 is complex
        with pytest.raises(Exception) as generic:
            value_and_grads(f, (0.0, 0.5), 0, eager, False)
        assert type(special.value) is type(generic.value)


GLOBAL = np.ones(3)


def test_outside_array_changed_in_place():
    def f(x):
        return np.sum(GLOBAL * x)

    df = adsrc.grad(f)
    assert df(2.0) == 3.0
    GLOBAL.resize(5, refcheck=False)
    GLOBAL[:] = 1.0
    try:
        assert df(2.0) == 5.0
    finally:
        GLOBAL.resize(3, refcheck=False)


def test_user_rules_stay_generic():
    calls = []

    def scaled(x):
        return 3.0 * x

    def rule(g, ans, x):
        calls.append(1)
        return g * 3.0

    adsrc.register_adjoint(scaled, rule)

    def f(x):
        return scaled(x) * x

    assert adsrc.grad(f)(2.0) == 12.0
    assert calls == [1]  # the user's rule ran once: never called on examples, never inlined


def test_dump_args():
    out = subprocess.run([sys.executable, "-m", "adsrc", "dump", "benchmarks/workloads.py:scalar_math",
                          "--args", "0.3, 1000"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "specialized for x: float, n: int" in out.stdout
    assert "dy = dy * 0.5 * math.cos(y_prev)" in out.stdout
    out = subprocess.run([sys.executable, "-m", "adsrc", "dump", "benchmarks/workloads.py:scalar_math",
                          "--args", "0.3, 1000", "--no-optimize"], capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 2 and "--no-optimize" in out.stderr


# ---- vjp runs the specialized adjoint too -------------------------------------------------------
def _vjp_all(f, args, cotangents, specialize, eager):
    saved = adsrc.config.specialize
    adsrc.config.specialize = specialize
    try:
        value, pullback = adsrc.vjp(f, *args, eager=eager)
        return value, [pullback(c) for c in cotangents]
    finally:
        adsrc.config.specialize = saved


@pytest.mark.parametrize("eager", [False, True])
def test_vjp_agrees_with_the_generic_adjoint_for_any_cotangent(eager, monkeypatch):
    import adsrc.api.gradients as gradients

    built = []
    original = gradients.specialized

    def recording(compiled, key):
        made = original(compiled, key)
        built.append(made is not None and made is not compiled)
        return made

    monkeypatch.setattr(gradients, "specialized", recording)
    x = np.linspace(0.1, 0.9, 5)
    scalar = (2.0, np.float64(-1.5), 3, np.array(0.5), np.array(2.0, dtype=np.float32))
    for f, args, cotangents in [
        (chain_numpy, (0.3, 4), scalar),
        (lambda v: np.sum(np.sin(v) * v), (x,), scalar),
        (lambda v: np.tanh(v) * 2.0, (x,), (np.ones(5), np.arange(5.0), np.arange(5))),
    ]:
        special = _vjp_all(f, args, cotangents, True, eager)
        generic = _vjp_all(f, args, cotangents, False, eager)
        assert same(special[0], generic[0])
        for a, b in zip(special[1], generic[1]):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-300)
            assert np.asarray(a).dtype == np.asarray(b).dtype
    assert any(built), "vjp should run a specialized adjoint"


# -- reads by slices added into one gradient in place (optimize/indexed.py scatter_adds) ---------------
def differences(x):
    return np.sum((x[1:] - x[:-1]) ** 2) + np.sum(x[2:] * x[:-2])


def stencil_concatenated(u0, r):
    u = u0
    for _ in range(4):
        u = np.concatenate([u[:1], u[1:-1] + r * (u[:-2] - 2 * u[1:-1] + u[2:]), u[-1:]])
    return np.sum(u * u)


def shrinking(u):
    for _ in range(3):
        u = u[1:] + u[:-1] * 0.5  # the gradient of the new u is read to make the old one's
    return np.sum(u * u)


def strided(x):
    return np.sum(x[::2] * x[1::2]) + np.sum(np.sin(x[1:3]))


def rows(X):
    return np.sum((X[1:] - X[:-1]) ** 2) + np.sum(X[:1] * X[-1:])


@pytest.mark.parametrize("f,args,wrt", [
    (differences, (np.linspace(-1.0, 2.0, 9),), 0),
    (stencil_concatenated, (np.linspace(0.0, 1.0, 8) ** 2, 0.2), (0, 1)),
    (shrinking, (np.linspace(-1.0, 1.0, 7),), 0),
    (strided, (np.linspace(0.1, 1.2, 8),), 0),
    (rows, (np.arange(12.0).reshape(4, 3) / 7.0,), 0),
], ids=lambda v: getattr(v, "__name__", ""))
def test_reads_by_slices_add_into_one_gradient(f, args, wrt):
    check(f, *args, wrt=wrt)


def test_a_stencil_gradient_reads_like_hand_written_code():
    source = adsrc.adjoint_source(differences, args=(np.ones(9),))
    assert "dx = np.zeros((9,))" in source and "dx[1:] += " in source and "dx[2:] += " in source
    assert "getitem_dx" not in source.split("def pullback")[1]


def heat_steps(u0, r, steps):
    u = u0
    for _ in range(steps):
        v = u.copy()
        v[1:-1] = u[1:-1] + r * (u[:-2] - 2 * u[1:-1] + u[2:])
        u = v
    return np.sum(u * u)


def scaled_rows(X, a):
    total = 0.0
    for row in X:
        total = total + np.sum(np.sin(a * row))
    return total


def overridden_terms(x, w):
    s = 0.0
    for xi in x:
        term = w * xi * xi
        if xi > 0:
            term = np.sin(w * xi)  # the first term's gradient is zero on this path, a float on the other
        s = s + term
    return s


def transposed_recurrence(W, h0, xs):
    h = h0
    for xt in xs:
        h = np.tanh(h @ W.T + xt)  # W.T's vjp batches by summing the cotangents first: no arithmetic saved
    return np.sum(h)


@pytest.mark.parametrize("f,args", [
    (transposed_recurrence, (np.linspace(-0.3, 0.3, 144).reshape(12, 12), np.zeros(12),
                             np.cos(np.arange(60.0)).reshape(5, 12))),
    (overridden_terms, (np.linspace(-1.0, 1.3, 40), 0.7)),
    (heat_steps, (np.sin(np.linspace(0.0, 3.0, 200)), 0.2, 6)),
    (scaled_rows, (np.linspace(0.1, 1.3, 300).reshape(3, 100), 0.7)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_contributions_that_holding_would_not_save_are_added_as_they_come(f, args):
    # A contribution to a scalar (r of r * u, a of a * row), or one of W.T, saves nothing when held: lazy mode
    # adds it at each step, as eager mode does, with the same code, though it has more than 64 elements.
    lazy, eager = (specialized_source(f, args, (0, 1), eager=e).split("def pullback", 1)[1] for e in (False, True))
    assert "Stack" not in lazy and "Thunk" not in lazy
    assert lazy == eager
    compare(f, args, (0, 1), exact_lazy=False)  # the generic lazy adjoint batches them: another order
    check(f, *args, wrt=(0, 1))


def quotients_and_roots(x, m, w):
    s = 0.0
    for i in range(len(x)):
        xi = x[i]
        s = s + np.sqrt(xi) * m[i] + np.log(xi * xi + 1.0) + xi / w + w / (xi * xi + 1.0)
    return s


def test_singular_derivatives_are_inlined_with_their_zero_guard():
    # sqrt at 0 has an infinite derivative; its cotangent m[i] * ds is 0 there, so the contribution is 0, not
    # NaN (registry.times): the inlined template computes it through the same function, bit for bit
    x = np.array([0.0, 0.3, 1.7, 2.5])
    m = np.array([0.0, 1.5, -0.5, 2.0])
    source = specialized_source(quotients_and_roots, (x, m, 0.8), (0, 2), eager=True)
    backward = source.split("def pullback", 1)[1]
    assert "singular.times(" in backward and "singular.zero_where_zero(" in backward
    assert "sqrt_dx" not in source and "divide_dx" not in source and "divide_dy" not in source
    assert "accumulate" not in backward  # the guards are pure: their kinds are known, so are the sums
    compare(quotients_and_roots, (x, m, 0.8), (0, 2), exact_lazy=False)
    dx, dw = adsrc.grad(quotients_and_roots, argnums=(0, 2))(x, m, 0.8)
    assert np.isfinite(dx).all() and dx[0] == 0.0 + 2 * 0.0 / 1.0 + 1 / 0.8
    inside = (np.array([0.2, 0.3, 1.7, 2.5]), m, 0.8)
    check(quotients_and_roots, *inside, wrt=(0, 2))


def kernel_through_rows(x, ell, m):
    n = len(x)
    K = np.zeros((n, n))
    for i in range(n):
        for j in range(m):
            K[i][j - 1] = np.exp(-(x[i] - x[j - 1]) ** 2 / ell)
    return np.sum(K * K)


def test_an_element_written_through_a_row_is_indexed_directly():
    # K[i][j] = v of a matrix and two ints writes K[i, j]: no index arithmetic per write (written_through)
    x = np.linspace(0.1, 1.0, 5)
    source = specialized_source(kernel_through_rows, (x, 0.5, 5), (0, 1))
    assert "written_through" not in source.split("def pullback", 1)[0]
    compare(kernel_through_rows, (x, 0.5, 5), (0, 1))
    check(kernel_through_rows, x, 0.5, 5, wrt=(0, 1))
    for specialize in (True, False):  # past the end: Python's IndexError, as the plain call raises
        with pytest.raises(IndexError):
            value_and_grads(kernel_through_rows, (x, 0.5, 7), (0, 1), False, specialize)
    with pytest.raises(IndexError):
        kernel_through_rows(x, 0.5, 7)
