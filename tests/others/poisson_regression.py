"""A Poisson generalised linear model with a log link: the negative log-likelihood of counts, written
with a helper that dispatches on an offset that may be None.

Idea from: statsmodels/statsmodels, statsmodels/genmod/families/family.py (the Poisson family's
log-likelihood with the log link and an optional exposure offset).
"""
import numpy as np
from scipy.special import gammaln

DESIGN = np.array([[1.0, 0.2], [1.0, -0.5], [1.0, 1.3], [1.0, 0.7], [1.0, -1.1]])
COUNTS = np.array([2.0, 0.0, 5.0, 3.0, 1.0])


def linear_predictor(beta, offset=None):
    eta = DESIGN @ beta
    if offset is not None:
        eta = eta + offset
    return eta


def loss(beta, exposure):
    eta = linear_predictor(beta, np.log(exposure))
    return -np.sum(COUNTS * eta - np.exp(eta) - gammaln(COUNTS + 1.0)) + 0.0 * np.sum(linear_predictor(beta))


ARGS = (np.array([0.3, 0.6]), np.array([1.0, 0.5, 2.0, 1.5, 1.0]))
WRT = (0, 1)
JAX_NAMES = {"gammaln": "jax.scipy.special.gammaln"}
