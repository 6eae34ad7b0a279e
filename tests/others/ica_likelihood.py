"""Independent component analysis: the log-likelihood of an unmixing matrix under a logistic source
density, with the log absolute determinant of the unmixing.

Idea from: HIPS/autograd, examples/ica.py (maximum-likelihood ICA with a heavy-tailed source prior).
"""
import numpy as np

MIXED = np.random.default_rng(12).standard_normal((10, 2)) @ np.array([[1.0, 0.4], [0.3, 0.8]])


def log_logistic_density(s):
    return -s - 2.0 * np.log1p(np.exp(-s))


def loss(unmixing):
    sources = MIXED @ unmixing.T
    _, logdet = np.linalg.slogdet(unmixing)
    return -(np.sum(log_logistic_density(sources)) + len(MIXED) * logdet)


ARGS = (np.array([[1.1, -0.2], [0.1, 0.9]]),)
WRT = 0
