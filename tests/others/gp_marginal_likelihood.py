"""The log marginal likelihood of a Gaussian process with an RBF kernel, from a packed parameter vector.

Idea from: HIPS/autograd, examples/gaussian_process.py (kernel hyperparameters fitted by their gradient).
"""
import numpy as np

X = np.linspace(-2.0, 2.0, 7)[:, None]
Y = np.sin(2.0 * X[:, 0]) + 0.1 * np.cos(5.0 * X[:, 0])


def unpack(params):
    mean, log_noise = params[0], params[1]
    log_amplitude, log_lengths = params[2], params[3:]
    return mean, np.exp(log_noise) + 1e-3, log_amplitude, log_lengths


def rbf(log_amplitude, log_lengths, a, b):
    scaled_a, scaled_b = a / np.exp(log_lengths), b / np.exp(log_lengths)
    gaps = np.sum((scaled_a[:, None, :] - scaled_b[None, :, :]) ** 2, axis=2)
    return np.exp(log_amplitude) * np.exp(-0.5 * gaps)


def loss(params):
    mean, noise, log_amplitude, log_lengths = unpack(params)
    cov = rbf(log_amplitude, log_lengths, X, X) + noise * np.eye(len(Y))
    centred = Y - mean
    sign, logdet = np.linalg.slogdet(cov)
    fit = centred @ np.linalg.solve(cov, centred)
    return -0.5 * (fit + logdet + len(Y) * np.log(2.0 * np.pi))


ARGS = (np.array([0.1, -2.0, 0.3, -0.2]),)
WRT = 0
