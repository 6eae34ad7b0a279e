"""Black-box variational inference: a reparameterised Monte Carlo ELBO of a diagonal Gaussian posterior.

Idea from: HIPS/autograd, examples/black_box_svi.py (the variational objective and its gradient). The
noise is drawn once, outside the objective, so the objective is a deterministic function to check.
"""
import numpy as np

NOISE = np.random.default_rng(3).standard_normal((8, 2))


def log_density(samples):
    """An unnormalised, banana-shaped target, one value per sample."""
    mu, log_sigma = samples[:, 0], samples[:, 1]
    sigma_density = -0.5 * log_sigma ** 2 / 1.35 ** 2
    mu_density = -0.5 * mu ** 2 / np.exp(log_sigma) ** 2 - log_sigma
    return sigma_density + mu_density


def gaussian_entropy(log_std):
    return 0.5 * len(log_std) * (1.0 + np.log(2.0 * np.pi)) + np.sum(log_std)


def loss(params):
    mean, log_std = params[:2], params[2:]
    samples = NOISE * np.exp(log_std) + mean
    return -(gaussian_entropy(log_std) + np.mean(log_density(samples)))


ARGS = (np.array([-0.5, 0.3, -1.0, -0.7]),)
WRT = 0
