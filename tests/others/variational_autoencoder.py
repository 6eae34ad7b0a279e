"""A variational autoencoder's negative ELBO: tanh networks folded over their layers with
functools.reduce, a reparameterised Gaussian latent with fixed noise, a Bernoulli decoder.

Idea from: HIPS/autograd, examples/variational_autoencoder.py (encoder and decoder MLPs, the
reparameterisation trick and the lower bound).
"""
import functools

import numpy as np

_RNG = np.random.default_rng(15)
DATA = (_RNG.uniform(size=(4, 5)) > 0.5).astype(float)
NOISE = _RNG.standard_normal((4, 2))


def network(layers, inputs):
    hidden = functools.reduce(lambda h, layer: np.tanh(h @ layer[0] + layer[1]), layers[:-1], inputs)
    W, b = layers[-1]
    return hidden @ W + b


def loss(encoder, decoder):
    out = network(encoder, DATA)
    mean, log_std = out[:, :2], out[:, 2:]
    latent = mean + np.exp(log_std) * NOISE
    logits = network(decoder, latent)
    log_likelihood = np.sum(DATA * logits - np.logaddexp(0.0, logits))
    kl = 0.5 * np.sum(mean ** 2 + np.exp(2.0 * log_std) - 2.0 * log_std - 1.0)
    return -(log_likelihood - kl) / len(DATA)


def _layers(sizes):
    return [(_RNG.standard_normal((m, n)) * 0.4, _RNG.standard_normal(n) * 0.1) for m, n in zip(sizes[:-1], sizes[1:])]


ARGS = (_layers([5, 3, 4]), _layers([2, 3, 5]))
WRT = (0, 1)
