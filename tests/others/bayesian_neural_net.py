"""A Bayesian neural network's log joint density, vectorised over weight samples: a generator cuts each
layer's weights and biases from the front of the sample matrix, and einsum applies them to every sample.

Idea from: HIPS/autograd, examples/bayesian_neural_net.py (make_nn_funs, whose unpack_layers is a
generator that the prediction loop iterates over).
"""
import numpy as np

SIZES = ((1, 4), (4, 1))
INPUTS = np.linspace(-1.0, 1.0, 5)[:, None]
TARGETS = np.cos(3.0 * INPUTS)


def unpack_layers(weights):
    samples = len(weights)
    for m, n in SIZES:
        yield weights[:, :m * n].reshape((samples, m, n)), weights[:, m * n:m * n + n].reshape((samples, 1, n))
        weights = weights[:, (m + 1) * n:]


def predictions(weights, inputs):
    inputs = np.expand_dims(inputs, 0)
    for W, b in unpack_layers(weights):
        outputs = np.einsum("mnd,mdo->mno", inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs


def loss(weights, prior=0.1, noise=0.05):
    log_prior = -prior * np.sum(weights ** 2, axis=1)
    errors = np.sum((predictions(weights, INPUTS) - TARGETS) ** 2, axis=1)[:, 0]
    return -np.mean(log_prior - errors / noise)


ARGS = (np.random.default_rng(14).standard_normal((2, 13)) * 0.5, 0.1, 0.05)
WRT = (0, 1, 2)
