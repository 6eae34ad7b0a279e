"""Particles in a soft pairwise potential, moved by velocity Verlet; the loss is the final kinetic energy
plus the distance of the particles from their targets. The trajectory is kept in an array written row
by row.

Idea from: jax-md/jax-md, README.md and jax_md/simulate.py (an energy function of positions, its force
as a gradient, and a symplectic integrator stepping positions and velocities).
"""
import numpy as np

TARGETS = np.array([[0.0, 0.0], [1.0, 0.2], [0.3, 1.1]])


def forces(positions, stiffness):
    gaps = positions[:, None, :] - positions[None, :, :]
    squared = np.sum(gaps ** 2, axis=2) + np.eye(len(positions))
    push = stiffness * np.exp(-squared) * (1.0 - np.eye(len(positions)))
    return 2.0 * np.sum(push[:, :, None] * gaps, axis=1)


def loss(positions, velocities, stiffness):
    dt, steps = 0.05, 6
    path = np.zeros((steps + 1,) + positions.shape)
    path[0] = positions
    acceleration = forces(positions, stiffness)
    for t in range(steps):
        positions = positions + dt * velocities + 0.5 * dt ** 2 * acceleration
        updated = forces(positions, stiffness)
        velocities = velocities + 0.5 * dt * (acceleration + updated)
        acceleration = updated
        path[t + 1] = positions
    return 0.5 * np.sum(velocities ** 2) + np.sum((path[-1] - TARGETS) ** 2) + 0.01 * np.sum(path ** 2)


_RNG = np.random.default_rng(9)
ARGS = (_RNG.standard_normal((3, 2)) * 0.5, _RNG.standard_normal((3, 2)) * 0.1, 1.5)
WRT = (0, 1, 2)
JAX = False  # writes rows of an array
