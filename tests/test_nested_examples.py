"""examples/saddle.py and examples/particle.py: a derivative inside the function differentiated.

GradBench's saddle and particle evals, written the plain NumPy way: the
inner derivative (reverse ``adsrc.grad`` or forward ``adsrc.jvp``) runs inside
a loop that the outer derivative (reverse or forward) differentiates. All
four nestings are checked against central finite differences of the plain
function, lazy and eager (the scripts themselves run in test_example_scripts).
"""
import os
import sys

import numpy as np
import pytest

import adsrc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))

import particle  # noqa: E402
import saddle  # noqa: E402

NESTINGS = [(outer, inner) for outer in ("reverse", "forward") for inner in ("reverse", "forward")]


def _central(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:
        return (f(float(x) + h) - f(float(x) - h)) / (2 * h)
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("outer, inner", NESTINGS)
def test_saddle_in_every_nesting(outer, inner, eager):
    p = np.array([0.8, -0.6])
    with adsrc.eager_unthunk(eager):
        got = saddle.nesting(outer, inner)(p)
    expected = _central(saddle.worst_case, p)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    # the closed form of the inner maximum, q* = (c / 2) (-sin p1, p0), gives the same gradient
    c = saddle.COUPLING
    closed = np.array([2 * p[0] + c * c / 2 * p[0], 2 * p[1] + c * c / 2 * np.sin(p[1]) * np.cos(p[1])])
    np.testing.assert_allclose(got, closed, rtol=1e-5)


def test_the_saddle_point_is_found():
    p, q = saddle.saddle_point(steps=40)
    np.testing.assert_allclose(p, 0.0, atol=1e-3)
    np.testing.assert_allclose(q, 0.0, atol=1e-3)


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("outer, inner", NESTINGS)
def test_particle_in_every_nesting(outer, inner, eager):
    w = 0.05
    with adsrc.eager_unthunk(eager):
        got = particle.nesting(outer, inner)(w)
    np.testing.assert_allclose(got, _central(particle.landing_miss, w), rtol=1e-6)


def test_the_control_lowers_the_landing_miss():
    w, miss = particle.minimize(0.0, steps=3)
    assert miss < 0.1 * particle.landing_miss(0.0) and w > 0.0
