"""Automatic differentiation variational inference of a two-dimensional target: the ELBO averages the
log density over a few fixed standard-normal draws, written as sum(map(lambda ...)).

Idea from: google/jax, examples/advi.py (a mean-field Gaussian fitted to a funnel-shaped density by
Monte Carlo estimates of the ELBO over fixed random draws).
"""
import numpy as np

DRAWS = np.random.default_rng(16).standard_normal((6, 2))


def log_density(z):
    """A skewed, correlated target: an unnormalised log density of one point."""
    return -0.5 * (z[0] ** 2 + 2.0 * (z[1] - 0.5 * z[0] ** 2) ** 2) + 0.3 * np.tanh(z[0])


def loss(mean, log_std):
    entropy = np.sum(log_std)
    expected = sum(map(lambda eps: log_density(mean + np.exp(log_std) * eps), DRAWS)) / len(DRAWS)
    return -(expected + entropy)


ARGS = (np.array([0.2, -0.1]), np.array([-0.5, -0.3]))
WRT = (0, 1)
