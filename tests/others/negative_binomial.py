"""Maximum likelihood for a negative binomial distribution of counts, with gammaln from SciPy and the
parameters kept positive through softplus and logistic maps.

Idea from: HIPS/autograd, examples/negative_binomial_maxlike.py (fitting r and p to counts).
"""
import numpy as np
from scipy.special import gammaln

COUNTS = np.array([0.0, 3.0, 1.0, 7.0, 2.0, 4.0, 0.0, 5.0])


def softplus(x):
    return np.log1p(np.exp(x))


def loss(params):
    r = softplus(params[0])
    p = 1.0 / (1.0 + np.exp(-params[1]))
    per_count = gammaln(r + COUNTS) - gammaln(COUNTS + 1.0) - gammaln(r) + COUNTS * np.log(p) + r * np.log1p(-p)
    return -np.mean(per_count)


ARGS = (np.array([0.4, -0.3]),)
WRT = 0
JAX_NAMES = {"gammaln": "jax.scipy.special.gammaln"}
