"""Fitting a cubic polynomial to sin(x) by its squared error, the coefficients passed as four floats.

Idea from: pytorch/tutorials, beginner_source/examples_tensor/polynomial_numpy.py (the NumPy warm-up
that fits y = a + b x + c x^2 + d x^3 with hand-written gradients).
"""
import numpy as np

X = np.linspace(-np.pi, np.pi, 25)
Y = np.sin(X)


def loss(a, b, c, d):
    prediction = a + b * X + c * X ** 2 + d * X ** 3
    return np.sum((prediction - Y) ** 2) / len(X)


ARGS = (0.1, 0.8, -0.05, -0.1)
WRT = (0, 1, 2, 3)
