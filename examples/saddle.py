"""A saddle point by nested gradient methods: a gradient inside the function we differentiate.

After GradBench's ``saddle`` eval (Pearlmutter and Siskind's nested-AD
benchmark), written the plain NumPy way, with a coupling term so that the
inner solution moves with the outer point. For

    f(p, q) = |p|^2 - |q|^2 + c * (p[0] q[1] - sin(p[1]) q[0])

the inner problem maximizes over q by gradient ascent, run for a fixed
number of steps *inside* the function ``worst_case(p)``; the outer problem
minimizes ``worst_case`` over p by gradient descent, which differentiates
through the inner ascent and so through the inner gradient: a second
derivative. The inner gradient may be reverse (``adsrc.grad``) or forward
(``adsrc.jvp`` along each axis), and so may the outer derivative: four
nestings, which agree.
"""
import numpy as np

import adsrc

COUPLING = 0.6
INNER_STEPS = 25
INNER_RATE = 0.3


def f(p, q):
    return np.sum(p * p) - np.sum(q * q) + COUPLING * (p[0] * q[1] - np.sin(p[1]) * q[0])


def reverse_gradient_in_q(p, q):
    return adsrc.grad(f, wrt=1)(p, q)


def forward_gradient_in_q(p, q):
    axes = np.eye(len(q))
    return np.array([adsrc.jvp(f, (p, q), (None, axes[k]))[1] for k in range(len(q))])


def worst_case(p, gradient_in_q=reverse_gradient_in_q):
    """max over q of f(p, q), by gradient ascent from q = (1, 1)."""
    q = np.ones(2)
    for _ in range(INNER_STEPS):
        q = q + INNER_RATE * gradient_in_q(p, q)
    return f(p, q)


def reverse_gradient(func, p):
    return adsrc.grad(func)(p)


def forward_gradient(func, p):
    axes = np.eye(len(p))
    return np.array([adsrc.jvp(func, (p,), (axes[k],))[1] for k in range(len(p))])


def nesting(outer, inner):
    """The gradient of ``worst_case``, ``outer`` ("reverse" or "forward") over the ``inner`` gradient."""
    gradient_in_q = {"reverse": reverse_gradient_in_q, "forward": forward_gradient_in_q}[inner]
    gradient = {"reverse": reverse_gradient, "forward": forward_gradient}[outer]

    def objective(p):
        return worst_case(p, gradient_in_q)

    return lambda p: gradient(objective, p)


def saddle_point(outer="reverse", inner="reverse", steps=30, rate=0.2):
    """Gradient descent on worst_case from p = (1, 1); returns p and the inner maximizer there."""
    gradient = nesting(outer, inner)
    p = np.ones(2)
    for _ in range(steps):
        p = p - rate * gradient(p)
    q = np.ones(2)
    for _ in range(INNER_STEPS):
        q = q + INNER_RATE * reverse_gradient_in_q(p, q)
    return p, q


if __name__ == "__main__":
    p0 = np.array([1.0, 1.0])
    for outer in ("reverse", "forward"):
        for inner in ("reverse", "forward"):
            g = nesting(outer, inner)(p0)
            print(f"{outer:>7} over {inner:<7}: gradient of worst_case at (1, 1) = {np.round(g, 10)}")
    p, q = saddle_point()
    print(f"saddle point: p = {np.round(p, 6)}, q = {np.round(q, 6)}, f = {f(p, q):.2e}")
