"""A charged particle steered by a control, with a derivative inside the simulation.

After GradBench's ``particle`` eval (Pearlmutter and Siskind's nested-AD
benchmark), written the plain NumPy way. A particle starts at (0, 8) moving
right at 0.75 and is pulled by two fixed charges, at (10, 10 - w) and at
(10, 0), through the potential

    phi(x) = sum over charges c of 1 / |x - c|

Naive Euler steps it (force = -grad phi, computed by adsrc *inside* the
simulation) until its next position would cross the floor y = 0; it then
flies straight to the floor. The control ``w`` moves the upper charge; we
want the particle to land at x = 0, and minimize the landing point squared.
Minimizing needs the derivative of the simulation with respect to ``w``,
which differentiates the force once more: a second derivative, mixed in x
and w. Each of the two derivatives may be reverse (``adsrc.grad``) or forward
(``adsrc.jvp`` along each axis), which makes four nestings; they agree.
"""
import numpy as np

import adsrc

STEP = 0.1
MAX_STEPS = 1000  # a control that pushes the particle away from the floor ends the flight here


def potential(x, w):
    charges = np.array([[10.0, 10.0 - w], [10.0, 0.0]])
    return np.sum(1.0 / np.sqrt(np.sum((x - charges) ** 2, axis=1)))


def reverse_force(x, w):
    return -adsrc.grad(potential)(x, w)


def forward_force(x, w):
    # one directional derivative per axis: forward mode
    _, along_x = adsrc.jvp(potential, (x, w), (np.array([1.0, 0.0]), None))
    _, along_y = adsrc.jvp(potential, (x, w), (np.array([0.0, 1.0]), None))
    return -np.array([along_x, along_y])


def landing_miss(w, force=reverse_force):
    """The landing point's x, squared, for the control ``w``."""
    x = np.array([0.0, 8.0])
    v = np.array([0.75, 0.0])
    for _ in range(MAX_STEPS):
        acceleration = force(x, w)
        x_next = x + STEP * v
        if x_next[1] <= 0.0:
            break
        x = x_next
        v = v + STEP * acceleration
    time_to_floor = -x[1] / v[1]
    return (x[0] + time_to_floor * v[0]) ** 2


def reverse_derivative(f, w):
    return adsrc.grad(f)(w)


def forward_derivative(f, w):
    return adsrc.jvp(f, (w,), (1.0,))[1]


def nesting(outer, inner):
    """d landing_miss / dw, with ``outer`` ("reverse" or "forward") over the force's ``inner``."""
    force = {"reverse": reverse_force, "forward": forward_force}[inner]
    derivative = {"reverse": reverse_derivative, "forward": forward_derivative}[outer]

    def miss(w):
        return landing_miss(w, force)

    return lambda w: derivative(miss, w)


def minimize(w, outer="forward", inner="reverse", steps=4, rate=0.008):
    """Gradient descent on the landing miss, halving the step where the miss would grow."""
    derivative = nesting(outer, inner)
    miss = landing_miss(w)
    for _ in range(steps):
        trial = w - rate * derivative(w)
        trial_miss = landing_miss(trial)
        if trial_miss < miss:
            w, miss = trial, trial_miss
        else:
            rate = rate / 2
    return w, miss


if __name__ == "__main__":
    w0 = 0.0
    for outer in ("reverse", "forward"):
        for inner in ("reverse", "forward"):
            d = nesting(outer, inner)(w0)
            print(f"{outer:>7} over {inner:<7}: d miss / dw at w = 0 is {float(d):.10f}")
    print(f"w = {w0:.4f}: landing miss squared {float(landing_miss(w0)):.4f}")
    w, miss = minimize(w0)
    print(f"w = {float(w):.4f}: landing miss squared {float(miss):.4f}, after gradient descent")
