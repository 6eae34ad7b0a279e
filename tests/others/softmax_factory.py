"""Multinomial logistic regression whose predictor is made by a factory: a local function that binds
the weights and returns the local function that predicts.

Idea from: google/jax, examples/mnist_classifier_fromscratch.py (predict and loss functions over a
params pytree, written in the closure-returning style common in JAX code).
"""
import numpy as np

INPUTS = np.array([[0.3, -1.2], [1.5, 0.4], [-0.7, 0.9], [0.1, 0.1]])
LABELS = np.eye(3)[[0, 1, 2, 1]]


def loss(weights, bias):
    def make_predictor(W, b):
        def predict(x):
            scores = x @ W + b
            return scores - np.log(np.sum(np.exp(scores), axis=1, keepdims=True))
        return predict

    predictor = make_predictor(weights, bias)
    return -np.mean(np.sum(predictor(INPUTS) * LABELS, axis=1))


ARGS = (np.array([[0.2, -0.1, 0.4], [0.3, 0.5, -0.2]]), np.array([0.1, 0.0, -0.1]))
WRT = (0, 1)
