"""Kernel ridge regression: a Gram matrix built from a kernel whose length scale functools.partial
binds, the representer weights from a linear solve, and a squared error on held-out points.

Idea from: google/jax, examples/kernel_lsq.py (kernel least squares, the kernel a function handed
around with its parameters bound).
"""
import functools

import numpy as np

TRAIN = np.linspace(-1.5, 1.5, 6)[:, None]
TRAIN_Y = np.sin(2.0 * TRAIN[:, 0])
TEST = np.array([[-1.0], [0.25], [1.2]])
TEST_Y = np.sin(2.0 * TEST[:, 0])


def gaussian_kernel(scale, a, b):
    return np.exp(-np.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1) / (2.0 * scale ** 2))


def loss(log_scale, log_ridge):
    kernel = functools.partial(gaussian_kernel, np.exp(log_scale))
    gram = kernel(TRAIN, TRAIN) + np.exp(log_ridge) * np.eye(len(TRAIN))
    alpha = np.linalg.solve(gram, TRAIN_Y)
    predicted = kernel(TEST, TRAIN) @ alpha
    return np.sum((predicted - TEST_Y) ** 2)


ARGS = (-0.3, -2.0)
WRT = (0, 1)
