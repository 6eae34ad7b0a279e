"""Soft k-means: responsibilities as a softmax of negative squared distances, and the expected
within-cluster energy plus the assignment entropy, differentiated with respect to the centres.

Idea from: scikit-learn/scikit-learn, sklearn/cluster/_kmeans.py (the k-means inertia), relaxed to soft
assignments as in deterministic annealing.
"""
import numpy as np

POINTS = np.array([[0.0, 0.1], [0.2, -0.1], [1.9, 2.1], [2.2, 1.8], [1.0, 0.9], [-0.3, 0.2]])


def loss(centres, beta=2.0):
    distances = np.sum((POINTS[:, None, :] - centres[None, :, :]) ** 2, axis=-1)
    logits = -beta * distances
    logits = logits - np.max(logits, axis=1, keepdims=True)
    weights = np.exp(logits)
    responsibilities = weights / np.sum(weights, axis=1, keepdims=True)
    energy = np.sum(responsibilities * distances)
    entropy = -np.sum(responsibilities * np.log(responsibilities))
    return energy - entropy / beta


ARGS = (np.array([[0.1, 0.0], [2.0, 2.0], [0.9, 1.2]]), 2.0)
WRT = (0, 1)
