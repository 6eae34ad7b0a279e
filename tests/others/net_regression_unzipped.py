"""Neural-network regression whose parameter unpacker yields all the weight matrices, then all the
biases, and whose prediction loop walks them together with zip(*unpack(params)).

Idea from: HIPS/autograd, examples/neural_net_regression.py (a tanh network fitted to 1-D data with
a Gaussian likelihood and prior over one flat weight vector).
"""
import numpy as np

SHAPES = ((1, 3), (3, 1))
INPUTS = np.linspace(-1.0, 1.0, 6)[:, None]
TARGETS = INPUTS ** 3 - 0.5 * INPUTS


def unpack(flat):
    weights, biases, start = [], [], 0
    for m, n in SHAPES:
        weights.append(flat[start:start + m * n].reshape(m, n))
        biases.append(flat[start + m * n:start + m * n + n])
        start = start + (m + 1) * n
    yield weights
    yield biases


def loss(flat):
    hidden = INPUTS
    for W, b in zip(*unpack(flat)):
        outputs = hidden @ W + b
        hidden = np.tanh(outputs)
    return np.sum((outputs - TARGETS) ** 2) + 0.01 * np.sum(flat ** 2)


ARGS = (np.random.default_rng(17).standard_normal(10) * 0.7,)
WRT = 0
