"""The forward algorithm of a hidden Markov model in log space: the log-likelihood of an observation
sequence, with transition and emission matrices made from unconstrained logits by a log-softmax.

Idea from: HIPS/autograd, examples/hmm_em.py (EM for an HMM, whose E-step is the gradient of the
log-likelihood the forward recursion computes).
"""
import numpy as np

OBSERVED = [0, 1, 1, 2, 0, 2]


def log_normalize(logits):
    top = np.max(logits, axis=-1, keepdims=True)
    return logits - top - np.log(np.sum(np.exp(logits - top), axis=-1, keepdims=True))


def logsumexp(a, axis):
    top = np.max(a, axis=axis)
    return top + np.log(np.sum(np.exp(a - np.expand_dims(top, axis)), axis=axis))


def loss(logits):
    start = log_normalize(logits["start"])
    transition = log_normalize(logits["transition"])
    emission = log_normalize(logits["emission"])
    alpha = start + emission[:, OBSERVED[0]]
    for symbol in OBSERVED[1:]:
        alpha = logsumexp(alpha[:, None] + transition, axis=0) + emission[:, symbol]
    return -logsumexp(alpha, axis=0)


_RNG = np.random.default_rng(11)
ARGS = ({"start": _RNG.standard_normal(2), "transition": _RNG.standard_normal((2, 2)),
         "emission": _RNG.standard_normal((2, 3))},)
WRT = 0
