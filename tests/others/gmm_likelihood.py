"""The log-likelihood of a mixture of diagonal Gaussians, with parameters held in a dict.

Idea from: HIPS/autograd, examples/gmm.py (fitting a Gaussian mixture by gradient ascent on its likelihood).
"""
import numpy as np

DATA = np.array([[0.1, 0.3], [1.9, 2.2], [-0.4, 0.0], [2.4, 1.7], [0.8, 1.1]])


def logsumexp(a, axis):
    top = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(a - top), axis=axis))


def component_logpdf(data, mean, log_scale):
    z = (data - mean) / np.exp(log_scale)
    return -0.5 * np.sum(z ** 2, axis=1) - np.sum(log_scale) - data.shape[1] * 0.5 * np.log(2.0 * np.pi)


def loss(params):
    log_weights = params["log_weights"] - logsumexp(params["log_weights"], axis=0)
    columns = [component_logpdf(DATA, m, s) + w
               for m, s, w in zip(params["means"], params["log_scales"], log_weights)]
    return np.sum(logsumexp(np.stack(columns, axis=1), axis=1))


ARGS = ({"log_weights": np.array([0.2, -0.1]),
         "means": np.array([[0.0, 0.2], [2.0, 1.8]]),
         "log_scales": np.array([[-0.2, 0.1], [0.0, -0.3]])},)
WRT = 0
