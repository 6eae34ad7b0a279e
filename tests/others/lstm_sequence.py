"""An LSTM cell unrolled over a sequence: gates, cell state and a squared-error readout at each step.

Idea from: HIPS/autograd, examples/lstm.py (the LSTM's update and its log-likelihood).
"""
import numpy as np

INPUTS = np.array([[0.5, -0.1], [0.3, 0.8], [-0.6, 0.2], [0.1, 0.4]])
TARGETS = np.array([0.2, -0.1, 0.4, 0.0])


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def step(params, x, hidden, cell):
    joined = np.concatenate([x, hidden, np.ones(1)])
    forget = sigmoid(joined @ params["forget"])
    ingate = sigmoid(joined @ params["ingate"])
    outgate = sigmoid(joined @ params["outgate"])
    change = np.tanh(joined @ params["change"])
    cell = cell * forget + ingate * change
    return outgate * np.tanh(cell), cell


def loss(params):
    hidden, cell = np.zeros(3), np.zeros(3)
    error = 0.0
    for x, target in zip(INPUTS, TARGETS):
        hidden, cell = step(params, x, hidden, cell)
        error = error + (hidden @ params["readout"] - target) ** 2
    return error


_RNG = np.random.default_rng(5)
ARGS = ({key: _RNG.standard_normal((6, 3)) * 0.5 for key in ("forget", "ingate", "outgate", "change")}
        | {"readout": _RNG.standard_normal(3)},)
WRT = 0
