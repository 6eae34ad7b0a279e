"""A tanh multilayer perceptron with a log-softmax output and an L2 penalty, on a list of (W, b) pairs.

Idea from: HIPS/autograd, examples/neural_net.py (the MNIST classifier's log posterior).
"""
import numpy as np

RNG = np.random.default_rng(1)
INPUTS = RNG.standard_normal((6, 3))
TARGETS = np.eye(3)[[0, 1, 2, 1, 0, 2]]


def log_softmax(z):
    top = np.max(z, axis=1, keepdims=True)
    return z - top - np.log(np.sum(np.exp(z - top), axis=1, keepdims=True))


def predict(layers, inputs):
    for W, b in layers[:-1]:
        inputs = np.tanh(inputs @ W + b)
    W, b = layers[-1]
    return log_softmax(inputs @ W + b)


def loss(layers, penalty=0.1):
    flat = sum(np.sum(W ** 2) + np.sum(b ** 2) for W, b in layers)
    return -np.sum(predict(layers, INPUTS) * TARGETS) / len(INPUTS) + penalty * flat


ARGS = ([(RNG.standard_normal((3, 4)) * 0.5, RNG.standard_normal(4) * 0.1),
         (RNG.standard_normal((4, 3)) * 0.5, RNG.standard_normal(3) * 0.1)], 0.1)
WRT = (0, 1)
