"""A two-layer network with a ReLU hidden layer and a squared-error loss.

Idea from: pytorch/tutorials, beginner_source/examples_autograd/two_layer_net_autograd.py (the
tutorial's network, here in NumPy).
"""
import numpy as np

_RNG = np.random.default_rng(13)
INPUTS = _RNG.standard_normal((5, 4))
OUTPUTS = _RNG.standard_normal((5, 2))


def loss(w1, w2):
    hidden = np.maximum(INPUTS @ w1, 0.0)
    return np.sum((hidden @ w2 - OUTPUTS) ** 2)


ARGS = (_RNG.standard_normal((4, 3)), _RNG.standard_normal((3, 2)))
WRT = (0, 1)
