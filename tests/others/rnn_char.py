"""A recurrent network over a one-hot sequence: hidden state updated in a loop, log-softmax outputs.

Idea from: HIPS/autograd, examples/rnn.py (a character-level RNN's log-likelihood).
"""
import numpy as np

SEQUENCE = np.eye(3)[[0, 2, 1, 1, 0]]


def log_softmax(z):
    return z - np.log(np.sum(np.exp(z)))


def loss(params):
    hidden = params["init"]
    total = 0.0
    for t in range(len(SEQUENCE) - 1):
        joined = np.concatenate([SEQUENCE[t], hidden])
        hidden = np.tanh(joined @ params["change"])
        output = log_softmax(hidden @ params["predict"])
        total = total + np.sum(output * SEQUENCE[t + 1])
    return -total / (len(SEQUENCE) - 1)


_RNG = np.random.default_rng(4)
ARGS = ({"init": _RNG.standard_normal(4) * 0.3, "change": _RNG.standard_normal((7, 4)) * 0.4,
         "predict": _RNG.standard_normal((4, 3)) * 0.4},)
WRT = 0
