"""Square roots by Newton's (Heron's) iteration run until the step is small, differentiated through the
unrolled while loop, and a fixed number of iterations of a contraction.

Idea from: HIPS/autograd, examples/fixed_points.py (differentiating through an iteration that converges
to a fixed point, here by unrolling it).
"""
import numpy as np


def newton_sqrt(a):
    guess = a
    change = 1.0
    while change > 1e-12:
        better = 0.5 * (guess + a / guess)
        change = abs(better - guess)
        guess = better
    return guess


def loss(a, b):
    x = b
    for _ in range(30):
        x = 0.5 * np.cos(x) + 0.1 * b
    return newton_sqrt(a) * x


ARGS = (2.5, 0.7)
WRT = (0, 1)
JAX = False  # the while loop branches on a traced value
