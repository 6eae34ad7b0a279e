"""The Rosenbrock valley in several dimensions, summed term by term in a loop.

Idea from: HIPS/autograd, examples/rosenbrock.py (minimising the banana function with its gradient).
"""
import numpy as np


def loss(x):
    total = 0.0
    for i in range(len(x) - 1):
        total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


ARGS = (np.array([-1.2, 1.0, 0.7, 1.3, 0.2]),)
WRT = 0
