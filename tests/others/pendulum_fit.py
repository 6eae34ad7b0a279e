"""Fitting a damped pendulum's length and damping to an observed trajectory: semi-implicit Euler steps,
the simulated angles written into a preallocated array, and a squared error against the data.

Idea from: pytorch/tutorials, the physics-fitting recipes of intermediate_source (a differentiable
simulation whose parameters are learned from observations), here in NumPy with a hand-written integrator.
"""
import numpy as np

OBSERVED = np.array([0.5, 0.47, 0.39, 0.27, 0.13, -0.02, -0.16, -0.28])


def simulate(length, damping, angle, steps, dt=0.1):
    angles = np.zeros(steps)
    velocity = 0.0
    for t in range(steps):
        angles[t] = angle
        velocity = velocity - dt * (9.81 / length * np.sin(angle) + damping * velocity)
        angle = angle + dt * velocity
    return angles


def loss(params):
    return np.sum((simulate(params[0], params[1], 0.5, len(OBSERVED)) - OBSERVED) ** 2)


ARGS = (np.array([2.0, 0.1]),)
WRT = 0
JAX = False  # writes into an array
