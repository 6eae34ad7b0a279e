"""The log evidence of Bayesian linear regression as a function of the log prior and noise precisions.

Idea from: scikit-learn/scikit-learn, sklearn/linear_model/_bayes.py (BayesianRidge's evidence
maximisation over alpha and lambda), here written as one closed-form objective.
"""
import numpy as np

_RNG = np.random.default_rng(10)
FEATURES = _RNG.standard_normal((8, 3))
TARGETS = FEATURES @ np.array([0.5, -1.0, 0.25]) + 0.1 * _RNG.standard_normal(8)


def loss(log_precisions):
    prior, noise = np.exp(log_precisions[0]), np.exp(log_precisions[1])
    n, d = FEATURES.shape
    posterior = prior * np.eye(d) + noise * FEATURES.T @ FEATURES
    mean = noise * np.linalg.solve(posterior, FEATURES.T @ TARGETS)
    misfit = noise * np.sum((TARGETS - FEATURES @ mean) ** 2) + prior * mean @ mean
    _, logdet = np.linalg.slogdet(posterior)
    evidence = 0.5 * (d * np.log(prior) + n * np.log(noise) - misfit - logdet - n * np.log(2.0 * np.pi))
    return -evidence


ARGS = (np.array([0.3, 2.0]),)
WRT = 0
