"""Second order: grad of grad, hvp, hessian and jacobian, forward over the eager adjoint.

The Hessians of logistic regression, an MLP loss and Rosenbrock are checked
against their closed forms; grad-of-grad through loops and branches against
finite differences of the first derivative; hvp against hessian @ v. A test
generated from the registry checks that differentiating each rule's vjp once
more (what second order does at every rule the adjoint calls) agrees with
finite differences of that vjp.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import adsrc
from adsrc.second_order.dispatch import call, ownership
from adsrc.values.containers import add_tangents, to_tangent
from adsrc.values.thunks import Thunk, zero
from adsrc.values.stacks import OuterStack, Stack
from rule_samples import SAMPLES
from test_forward import random_direction, shifted, tangent_leaves
from test_rules import RULES, cotangent, flat, positions, seed_of

EPS = 1e-6
RNG = np.random.default_rng(11)


def fd_jacobian(g, x):
    """Central differences of ``g`` (array- or float-valued) with respect to ``x``: d g / d x."""
    if np.ndim(x) == 0:
        return (g(x + EPS) - g(x - EPS)) / (2 * EPS)
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e.flat[j] = EPS
        columns.append((np.asarray(g(x + e)) - np.asarray(g(x - e))) / (2 * EPS))
    return np.reshape(np.stack(columns, axis=-1), np.shape(g(x)) + x.shape)


# ---- Hessians against closed forms -------------------------------------------------------
def logistic_loss(w, X, y):
    return np.sum(np.logaddexp(0.0, -y * (X @ w)))


def mlp_loss(W, X, v, y):
    h = np.tanh(X @ W)
    residual = h @ v - y
    return 0.5 * np.sum(residual ** 2)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def test_hessian_of_logistic_regression():
    X, y, w = RNG.normal(size=(8, 3)), np.sign(RNG.normal(size=8)), RNG.normal(size=3)
    p = 1.0 / (1.0 + np.exp(-y * (X @ w)))
    expected = X.T @ np.diag(p * (1.0 - p)) @ X
    np.testing.assert_allclose(adsrc.hessian(logistic_loss)(w, X, y), expected, rtol=1e-10, atol=1e-12)


def test_hessian_of_mlp_loss():
    X, W, v, y = RNG.normal(size=(6, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=4), RNG.normal(size=6)
    h = np.tanh(X @ W)
    slope = 1.0 - h ** 2
    residual = h @ v - y
    jac = X[:, :, None] * (v * slope)[:, None, :]  # d residual_i / d W_ka
    curvature = np.einsum("i,ia,ik,il,ab->kalb", residual, -2.0 * v * h * slope, X, X, np.eye(4))
    expected = np.einsum("ika,ilb->kalb", jac, jac) + curvature
    H = adsrc.hessian(mlp_loss)(W, X, v, y)
    assert H.shape == (3, 4, 3, 4)
    np.testing.assert_allclose(H, expected, rtol=1e-10, atol=1e-12)


def test_hessian_of_rosenbrock():
    x = RNG.normal(size=5)
    expected = np.zeros((5, 5))
    for i in range(4):
        expected[i, i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        expected[i + 1, i + 1] += 200.0
        expected[i, i + 1] = expected[i + 1, i] = -400.0 * x[i]
    np.testing.assert_allclose(adsrc.hessian(rosenbrock)(x), expected, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(adsrc.hessian(rosenbrock)(np.ones(3)), [[802, -400, 0], [-400, 1002, -400],
                                                                         [0, -400, 200]])


def test_hvp_is_hessian_times_v():
    X, y, w, v = RNG.normal(size=(8, 3)), np.sign(RNG.normal(size=8)), RNG.normal(size=3), RNG.normal(size=3)
    np.testing.assert_allclose(adsrc.hvp(logistic_loss)(w, X, y, v), adsrc.hessian(logistic_loss)(w, X, y) @ v,
                               rtol=1e-10)
    x, u = RNG.normal(size=5), RNG.normal(size=5)
    np.testing.assert_allclose(adsrc.hvp(rosenbrock)(x, u), adsrc.hessian(rosenbrock)(x) @ u, rtol=1e-10)


def test_hessian_blocks_for_several_arguments():
    def f(a, b):
        return np.sum(np.sin(a) * b ** 2) + a[0] * b[1]

    a, b = RNG.normal(size=3), RNG.normal(size=3)
    (haa, hab), (hba, hbb) = adsrc.hessian(f, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(hab, fd_jacobian(lambda bb: adsrc.grad(f, 0)(a, bb), b), atol=1e-6)
    np.testing.assert_allclose(hba, hab.T, atol=1e-10)
    np.testing.assert_allclose(haa, fd_jacobian(lambda aa: adsrc.grad(f, 0)(aa, b), a), atol=1e-6)
    np.testing.assert_allclose(hbb, fd_jacobian(lambda bb: adsrc.grad(f, 1)(a, bb), b), atol=1e-6)


# ---- grad of grad through control flow -----------------------------------------------------
def loop_with_branches(x):
    s = 0.0
    for i in range(5):
        if s < 1.0:
            s = s + math.sin(x * i)
        elif s > 2.0:
            s = s / (1.0 + x * x)
        else:
            s = s * x
    return s


def while_with_break(x):
    y = x
    n = 0
    while True:
        y = np.tanh(y) * 1.5 + x ** 2
        n += 1
        if n >= 6 or y > 3.0:
            break
    return y * np.exp(-x)


def cube(t):
    return t ** 3 + 2.0 * t


def with_callee(x):
    total = 0.0
    for k in range(3):
        total = total + cube(x * (k + 1)) * np.cos(x)
    return total


def array_loop(x):
    h = x
    for _ in range(3):
        h = np.tanh(h * 1.3 + 0.2)
    return np.sum(h ** 2) + np.max(h)


@pytest.mark.parametrize("f", [loop_with_branches, while_with_break, with_callee])
@pytest.mark.parametrize("x", [0.35, 1.2, -0.8])
def test_grad_of_grad_matches_finite_differences_of_the_gradient(f, x):
    second = adsrc.grad(adsrc.grad(f))(x)
    first = adsrc.grad(f)
    assert second == pytest.approx((first(x + EPS) - first(x - EPS)) / (2 * EPS), rel=1e-6, abs=1e-6)


def test_value_and_grad_of_grad():
    value, second = adsrc.value_and_grad(adsrc.grad(cube))(1.5)
    assert value == pytest.approx(3 * 1.5 ** 2 + 2.0)
    assert second == pytest.approx(6 * 1.5)


def test_grad_of_grad_with_respect_to_another_argument():
    def f(x, y):
        return np.sin(x * y) * y

    mixed = adsrc.grad(adsrc.grad(f, 0), 1)(0.4, 1.3)
    first = adsrc.grad(f, 0)
    assert mixed == pytest.approx((first(0.4, 1.3 + EPS) - first(0.4, 1.3 - EPS)) / (2 * EPS), rel=1e-6)


def test_hessian_through_array_loops_matches_finite_differences():
    x = RNG.normal(size=4)
    np.testing.assert_allclose(adsrc.hessian(array_loop)(x), fd_jacobian(adsrc.grad(array_loop), x), atol=1e-6)


# ---- jacobians ------------------------------------------------------------------------------
def vector_function(x, A):
    return np.tanh(A @ x) * x[0]


def test_jacobian_rev_and_fwd_agree_with_finite_differences():
    x, A = RNG.normal(size=3), RNG.normal(size=(4, 3))
    expected = fd_jacobian(lambda z: vector_function(z, A), x)
    np.testing.assert_allclose(adsrc.jacobian(vector_function)(x, A), expected, atol=1e-7)
    np.testing.assert_allclose(adsrc.jacobian(vector_function, mode="fwd")(x, A), expected, atol=1e-7)
    jA = adsrc.jacobian(vector_function, wrt=1, mode="fwd")(x, A)
    assert jA.shape == (4, 4, 3)
    np.testing.assert_allclose(jA, adsrc.jacobian(vector_function, wrt=1)(x, A), atol=1e-12)


def test_jacobian_of_a_gradient_is_the_hessian():
    x = RNG.normal(size=4)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(adsrc.jacobian(adsrc.grad(rosenbrock), mode=mode)(x),
                                   adsrc.hessian(rosenbrock)(x), rtol=1e-12)


def test_jvp_of_grad_is_forward_over_reverse():
    x, v = RNG.normal(size=5), RNG.normal(size=5)
    gradient, tangent = adsrc.jvp(adsrc.grad(rosenbrock), (x,), (v,))
    np.testing.assert_allclose(gradient, adsrc.grad(rosenbrock)(x))
    np.testing.assert_allclose(tangent, adsrc.hessian(rosenbrock)(x) @ v, rtol=1e-10)


def outer_and_dot(x, A):
    return np.sin(np.outer(x, x)) + np.cos(A @ x)


def test_jacobian_of_a_jacobian_matches_finite_differences():
    x, A = RNG.normal(size=3), RNG.normal(size=(3, 3))
    J = adsrc.jacobian(outer_and_dot)
    expected = fd_jacobian(lambda z: J(z, A), x)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(adsrc.jacobian(J, mode=mode)(x, A), expected, atol=1e-7)
    assert adsrc.jacobian(J).order == 2
    JJ = adsrc.jacobian(adsrc.jacobian(J))  # a third derivative: forward over forward over reverse
    np.testing.assert_allclose(JJ(x, A), fd_jacobian(lambda z: adsrc.jacobian(J)(z, A), x), atol=1e-6)


def sine_of_jacobian(x, A):
    return np.sum(np.sin(adsrc.jacobian(outer_and_dot)(x, A)) * A)


def test_a_jacobian_called_inside_a_differentiated_function():
    x, A = RNG.normal(size=3), RNG.normal(size=(3, 3))
    expected = fd_jacobian(lambda z: sine_of_jacobian(z, A), x)
    for eager in (False, True):
        np.testing.assert_allclose(adsrc.grad(sine_of_jacobian, eager=eager)(x, A), expected, atol=1e-7)
    v = RNG.normal(size=3)
    np.testing.assert_allclose(adsrc.jvp(sine_of_jacobian, (x, A), (v, None))[1], expected @ v, atol=1e-7)


# ---- thunks are off at the inner level ---------------------------------------------------------
def test_second_order_runs_the_eager_adjoint_whatever_the_mode(monkeypatch):
    made = []
    original, original_add, original_push = Thunk.__new__, Stack.add, Stack.push
    original_outer = OuterStack.push

    def counting(cls, *args, **kwargs):
        made.append(args[0])
        return original(cls, *args, **kwargs)

    def counting_add(self, *args, **kwargs):  # a loop's contributions, deferred as a Stack (values/stacks.py)
        made.append(args[0])
        return original_add(self, *args, **kwargs)

    def counting_push(self, *args):  # the same, where the kinds prove the cotangents arrays
        made.append(args[0])
        return original_push(self, *args)

    def counting_outer(self, *factors):  # the same, typed: outer products of vectors
        made.append(factors[0])
        return original_outer(self, *factors)

    W, x = RNG.normal(size=(3, 3)), RNG.normal(size=3)
    with adsrc.eager_unthunk(True):
        eager = adsrc.hessian(shared_weight)(W, x)
    monkeypatch.setattr(Thunk, "__new__", counting)
    monkeypatch.setattr(Stack, "add", counting_add)
    monkeypatch.setattr(Stack, "push", counting_push)
    monkeypatch.setattr(OuterStack, "push", counting_outer)
    with adsrc.eager_unthunk(False):
        lazy = adsrc.hessian(shared_weight)(W, x)
        adsrc.grad(shared_weight)(W, x)  # first order still builds thunks in this mode
    np.testing.assert_array_equal(eager, lazy)
    assert made, "first-order gradients should still be lazy"
    made.clear()
    with adsrc.eager_unthunk(False):
        adsrc.hvp(shared_weight)(W, x, W)
    assert not made, "the inner adjoint of a second derivative must accumulate eagerly"
    np.testing.assert_allclose(lazy, fd_jacobian(lambda w: adsrc.grad(shared_weight)(w, x), W), atol=1e-6)


def shared_weight(W, x):
    for _ in range(3):
        x = np.tanh(W @ x)
    return np.sum(x ** 2)


# ---- third and fourth order ----------------------------------------------------------------------
def test_third_and_fourth_derivatives_of_a_scalar_function():
    assert adsrc.grad(adsrc.grad(adsrc.grad(cube)))(1.0) == 6.0
    assert adsrc.grad(adsrc.grad(adsrc.grad(adsrc.grad(cube))))(1.0) == 0.0


def _summed_cube(x):
    return np.sum(x ** 3)


def _cubes(x):
    return x ** 3


def _mixed(x):
    return np.sum(np.sin(x) * x[::-1] ** 2) + x[0] * np.exp(x[1])


@pytest.mark.parametrize("make, below", [
    (lambda: adsrc.jacobian(adsrc.hessian(_mixed)), lambda: adsrc.hessian(_mixed)),
    (lambda: adsrc.jacobian(adsrc.hessian(_mixed), mode="fwd"), lambda: adsrc.hessian(_mixed)),
    (lambda: adsrc.hessian(adsrc.grad(_mixed)), lambda: adsrc.jacobian(adsrc.grad(_mixed))),
    (lambda: adsrc.hessian(adsrc.hessian(_mixed)), lambda: adsrc.jacobian(adsrc.hessian(_mixed))),
    (lambda: adsrc.jacobian(adsrc.jacobian(adsrc.hessian(_mixed))), lambda: adsrc.jacobian(adsrc.hessian(_mixed))),
], ids=["jacobian-hessian", "jacobian-fwd-hessian", "hessian-grad", "hessian-hessian", "jacobian-jacobian-hessian"])
@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_compositions_of_order_three_and_four_match_finite_differences_of_the_order_below(make, below, eager):
    x = np.array([0.3, -0.7])
    with adsrc.eager_unthunk(eager):
        np.testing.assert_allclose(make()(x), fd_jacobian(below(), x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("make", [
    lambda: adsrc.grad(adsrc.hessian(_summed_cube)),
    lambda: (lambda x: adsrc.vjp(adsrc.hessian(_summed_cube), x)),
], ids=["grad-hessian", "vjp-hessian"])
def test_reverse_mode_of_a_hessian_is_refused_naming_the_function_and_the_remedy(make):
    """Not as "a Jacobian, not a Python function": the refusal says what to use instead."""
    with pytest.raises(adsrc.errors.InvalidArgument, match=r"reverse mode.*adsrc.jacobian") as caught:
        make()(np.ones(2))
    assert "test_higher.py:" in str(caught.value)


def test_reverse_mode_of_a_first_order_jacobian_says_what_to_use_instead():
    with pytest.raises(adsrc.errors.InvalidArgument, match=r"adsrc.jacobian\(adsrc.jacobian\(f\)\)"):
        adsrc.vjp(adsrc.jacobian(_cubes), np.ones(2))
    jj = adsrc.jacobian(adsrc.jacobian(_cubes))(np.array([1.0, 2.0]))
    expected = np.zeros((2, 2, 2))
    expected[0, 0, 0], expected[1, 1, 1] = 6.0, 12.0
    np.testing.assert_allclose(jj, expected)


def test_grad_of_value_and_grad_is_rejected():
    with pytest.raises(adsrc.errors.InvalidArgument):
        adsrc.grad(adsrc.value_and_grad(cube))(1.0)


def test_jacobian_mode_is_checked():
    with pytest.raises(adsrc.errors.InvalidArgument):
        adsrc.jacobian(cube, mode="sideways")


def nuclear(x):
    return np.linalg.norm(x, "nuc")


def test_hessian_through_svd_matches_finite_differences():
    # The nuclear norm's vjp calls np.linalg.svd, whose tangent rule second order uses.
    x = RNG.normal(size=(2, 3))
    h = adsrc.hessian(nuclear)(x)
    eps, fd = 1e-6, np.zeros((2, 3, 2, 3))
    for index in np.ndindex(2, 3):
        step = np.zeros((2, 3))
        step[index] = eps
        fd[index] = (adsrc.grad(nuclear)(x + step) - adsrc.grad(nuclear)(x - step)) / (2 * eps)
    np.testing.assert_allclose(np.reshape(h, (2, 3, 2, 3)), np.transpose(fd, (2, 3, 0, 1)), rtol=1e-5, atol=1e-6)


_no_rule_derivative = np.frompyfunc(lambda v: 3.0 * v * v, 1, 1)  # no source and no rule


def opaque_cube(x):
    return x ** 3


adsrc.register_adjoint(opaque_cube, lambda g, ans, x: g * _no_rule_derivative(x).astype(float))


def calls_opaque(x):
    return np.sum(opaque_cube(x))


def test_second_order_without_a_rule_raises_rather_than_drops_a_tangent():
    with pytest.raises(NotImplementedError):
        adsrc.hessian(calls_opaque)(RNG.normal(size=3))


# ---- every rule, differentiated a second time ---------------------------------------------------
# Vjps that call a function with no tangent rule cannot be differentiated again; they must say so.
NEEDS_SVD: set = set()


def check_vjp_tangent(rule, case, seed, label):
    """The dispatcher's tangent of ``vjp(g, ans, *args)`` against finite differences of the vjp."""
    rng = np.random.default_rng(seed)
    args, kwargs = case.draw(rng)
    ans = rule.func(*args, **kwargs)
    g, dg = cotangent(ans, rng), cotangent(ans, rng)
    moved = positions(rule.vjps, case, args)
    directions = {p: random_direction(args[p], rng) for p in moved}
    dans = zero
    for p in moved:
        dans = add_tangents(dans, rule.jvps[p](to_tangent(directions[p]), ans, *args, **kwargs))
    targs = tuple(to_tangent(directions[p]) if p in directions else zero for p in range(len(args)))
    partial = isinstance(g, (list, tuple)) and any(x is zero for x in g)
    if partial:  # a result with a part that has no cotangent (cho_factor's flag, lu_factor's pivots):
        dg = zero  # the finite differences below hold g fixed, so its tangent is zero too

    def vjp_at(vjp, step):
        moved_args = [shifted(a, directions[p], step) if p in directions else a for p, a in enumerate(args)]
        return vjp(g if partial else shifted(g, dg, step), rule.func(*moved_args, **kwargs), *moved_args, **kwargs)

    for p in moved:
        vjp = rule.vjps[p]
        with ownership():
            # (where g has a zero piece, an integer output, g is held fixed on both sides)
            _, tangent = call(vjp, (zero if partial else to_tangent(dg), dans, *targs), {}, g, ans, *args, **kwargs)
        expected = [None if a is None else (a - b) / (2 * EPS)
                    for a, b in zip(flat(vjp_at(vjp, EPS)), flat(vjp_at(vjp, -EPS)))]
        for k, (got, want) in enumerate(zip(tangent_leaves(tangent, args[p]), expected)):
            if got is not None and want is not None:
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{label}: argument {p}, leaf {k}")


SECOND_ORDER_CASES = [pytest.param(name, i, id=f"{name}[{i}]") for name in RULES
                      for i in range(len(SAMPLES.get(name, [])))]


@pytest.mark.parametrize("name,i", SECOND_ORDER_CASES)
def test_vjp_differentiated_again_matches_finite_differences(name, i):
    label = f"{name}[{i}]"
    if (name, i) in NEEDS_SVD:
        with pytest.raises(NotImplementedError, match="svd"):
            check_vjp_tangent(RULES[name], SAMPLES[name][i], seed_of("second" + label), label)
        return
    check_vjp_tangent(RULES[name], SAMPLES[name][i], seed_of("second" + label), label)


# ---- the any-Python forward pass itself -----------------------------------------------------
def _scatter(buffer, index, values):
    np.add.at(buffer, index, values)


def general_code(x, scale=2.0, *rest, power=2, **options):
    """Constructs the fenced forward pass never sees but adjoints and rules use."""
    out = np.zeros(4)
    _scatter(out, np.array([0, 0, 3]), x[:3] * scale)  # a helper writing into its caller's array
    out[1] = x[3] ** power
    out[2] += sum(v * v for v in rest) if rest else 0.0
    stack = []
    for i, v in enumerate(x):
        stack.append(v * i)
    total = 0.0
    while stack:
        total = total + stack.pop() * options.get("weight", 1.0)
    squared = (lambda z: z * z)(total)
    y = out if total > 100 else out * total
    first, second = {"a": y, "b": total}.values()

    def inner(z):
        return z * first

    return inner(np.sin(squared)) + second


def test_any_python_pass_matches_finite_differences():
    x, rest = RNG.normal(size=4), (0.5, -1.5)
    dx, drest, dscale, dweight = RNG.normal(size=4), (0.3, 0.2), 0.7, -0.4

    def f(x, scale, r0, r1, weight):
        return general_code(x, scale, r0, r1, weight=weight)

    with ownership():
        value, tangent = call(general_code, (dx, dscale, *drest), {"weight": dweight}, x, 2.0, *rest, weight=1.5)
    np.testing.assert_allclose(value, f(x, 2.0, *rest, 1.5))
    args, directions = (x, 2.0, *rest, 1.5), (dx, dscale, *drest, dweight)
    plus = f(*(a + EPS * d for a, d in zip(args, directions)))
    minus = f(*(a - EPS * d for a, d in zip(args, directions)))
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * EPS), rtol=1e-6, atol=1e-8)


def writes_into_a_view(x):
    out = np.zeros((2, 2))
    view = np.moveaxis(out, 0, 1)
    view[0] = x
    return out


def test_any_python_pass_refuses_what_it_cannot_follow():
    with pytest.raises(NotImplementedError, match="view"):
        with ownership():
            call(writes_into_a_view, (np.ones(2),), {}, np.ones(2))
    # A C function without a rule: fine while no tangent reaches it, an error when one would be lost.
    assert call(math.ulp, (zero,), {}, 2.0)[1] is zero
    with pytest.raises(NotImplementedError, match="ulp"):
        call(math.ulp, (1.0,), {}, 2.0)


def test_forward_over_reverse_through_a_container_argument_read_twice():
    """The adjoint adds the cotangents of pair[0] and pair[1] as containers (leaf by leaf); forward mode
    over it must add their tangents leaf by leaf too, not concatenate them as tuples."""
    def f(pair):
        return np.sum(np.sin(pair[0]) * pair[1])

    def g(p):
        return np.sum(np.sin(p["w"]) * p["x"])
    w, x = np.array([0.3, 0.5]), np.array([1.2, -0.7])
    for func, arg, direction in [(f, (w, x), (np.array([1.0, 0.0]), np.zeros(2))),
                                 (f, [w, x], [np.array([1.0, 0.0]), np.zeros(2)]),
                                 (g, {"w": w, "x": x}, {"w": np.array([1.0, 0.0]), "x": np.zeros(2)})]:
        tangent = adsrc.jvp(adsrc.grad(func), (arg,), (direction,))[1]
        dw, dx = (tangent["w"], tangent["x"]) if isinstance(tangent, dict) else tangent
        np.testing.assert_allclose(dw, [-np.sin(0.3) * 1.2, 0.0], rtol=1e-12)
        np.testing.assert_allclose(dx, [np.cos(0.3), 0.0], rtol=1e-12)


# ---- array methods spelled as methods, and rules called as values -------------------------------
def methods_with_separate_ints(x):
    y = x.reshape(4, 3).transpose(1, 0).reshape((2, 6)).transpose()  # the shape and axes as separate ints
    z = x.clip(-1.0, 1.0).sum(0) * x.max(axis=1).mean() + x.cumsum(1).prod()
    w = x.dot(x.T).trace() + x.diagonal().std() + x.var(ddof=1) + x.swapaxes(0, 1).ravel("F")[0]
    return np.sum(np.sin(y)) + np.sum(z ** 2) + w + x.repeat(2, axis=0).take([0, 5]).sum() * x.min()


def rules_called_as_values(x, reduce=np.prod):
    total = reduce(np.exp(x) * 0.5) + reduce(x * 0.3, 0)
    for f in [np.sum, np.max, np.tanh, np.cumsum]:
        total = total + np.sum(f(x * 1.5) ** 2)
    return total


@pytest.mark.parametrize("f", [methods_with_separate_ints, rules_called_as_values], ids=lambda f: f.__name__)
@pytest.mark.parametrize("eager", [False, True])
def test_second_order_of_methods_and_of_rules_called_as_values(f, eager):
    x = RNG.normal(size=(3, 4)) if f is methods_with_separate_ints else RNG.normal(size=4)
    with adsrc.eager_unthunk(eager):
        adsrc.check_grads(f, (x,), order=2)
    v = RNG.normal(size=x.shape)
    hvp = adsrc.hvp(f)(x, v)
    first = adsrc.grad(f)
    np.testing.assert_allclose(hvp, (first(x + EPS * v) - first(x - EPS * v)) / (2 * EPS), rtol=1e-5, atol=1e-6)


def rule_with_a_second_argument(a, b, reduce):
    return reduce(np.sin(a) * b)


@pytest.mark.parametrize("reduce", [np.prod, np.sum, np.max], ids=lambda f: f.__name__)
def test_a_rule_called_as_a_value_differentiated_in_an_argument_its_gradient_holds_fixed(reduce):
    a, b, t = np.array([0.3, 0.8, -0.5]), np.array([1.2, 0.7, 2.0]), np.array([0.3, -0.2, 0.5])
    g = adsrc.grad(rule_with_a_second_argument, wrt=0)
    _, got = adsrc.jvp(g, (a, b, reduce), (np.zeros(3), t, None))
    np.testing.assert_allclose(got, (g(a, b + EPS * t, reduce) - g(a, b - EPS * t, reduce)) / (2 * EPS),
                               rtol=1e-6, atol=1e-8)


def test_reverse_mode_of_a_hessian_vector_product_is_refused_naming_forward_mode():
    def f(a):
        return np.sum(np.sin(a) * a)

    x = np.array([0.3, 0.5])
    for api in (adsrc.grad, adsrc.value_and_grad, adsrc.hessian):
        with pytest.raises(adsrc.errors.InvalidArgument, match=r"hvp\(f\).*test_higher.py:\d+.*reverse mode"):
            api(adsrc.hvp(f))(x, np.ones(2))
    np.testing.assert_allclose(adsrc.hvp(f)(x, np.ones(2)), adsrc.hessian(f)(x) @ np.ones(2), rtol=1e-12)
