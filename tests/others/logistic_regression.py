"""Logistic regression: the negative log-likelihood of labels under sigmoid predictions.

Idea from: HIPS/autograd, examples/logistic_regression.py (training weights by gradient steps).
"""
import numpy as np

INPUTS = np.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.30], [0.74, -2.49, 1.39]])
LABELS = np.array([1.0, 1.0, 0.0, 1.0])


def sigmoid(z):
    return 0.5 * (np.tanh(z / 2.0) + 1.0)


def loss(weights):
    probs = sigmoid(INPUTS @ weights)
    chance = probs * LABELS + (1.0 - probs) * (1.0 - LABELS)
    return -np.sum(np.log(chance))


ARGS = (np.array([0.1, -0.3, 0.2]),)
WRT = 0
