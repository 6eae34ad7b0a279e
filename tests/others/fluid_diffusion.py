"""A periodic 2-D field that is diffused and advected by np.roll stencils for a few steps; the loss is
its distance from a target pattern.

Idea from: HIPS/autograd, examples/fluidsim/fluidsim.py (optimising a smoke simulation's initial
velocity field through many time steps of np.roll arithmetic).
"""
import numpy as np

_GRID = np.linspace(0.0, 2.0 * np.pi, 6, endpoint=False)
TARGET = np.sin(_GRID)[:, None] * np.cos(_GRID)[None, :]


def laplacian(field):
    return (np.roll(field, 1, axis=0) + np.roll(field, -1, axis=0) + np.roll(field, 1, axis=1)
            + np.roll(field, -1, axis=1) - 4.0 * field)


def advect(field, vx, vy):
    """First-order upwind differences for a constant, positive velocity."""
    return field - vx * (field - np.roll(field, 1, axis=1)) - vy * (field - np.roll(field, 1, axis=0))


def loss(field, rates):
    for _ in range(5):
        field = advect(field + rates[0] * laplacian(field), rates[1], rates[2])
    return np.sum((field - TARGET) ** 2)


ARGS = (np.random.default_rng(8).standard_normal((6, 6)), np.array([0.1, 0.2, 0.15]))
WRT = (0, 1)
