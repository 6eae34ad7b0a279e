"""A small convolutional network in plain NumPy: layer classes, a valid 2-D convolution summed over kernel
offsets, 2x2 max pooling by reshaping, and a softmax cross-entropy readout.

Idea from: HIPS/autograd, examples/convnet.py (conv_layer, maxpool_layer and full_layer objects that a
parser lays out in one weight vector).
"""
import numpy as np

IMAGES = np.random.default_rng(6).standard_normal((2, 1, 6, 6))
LABELS = np.array([[1.0, 0.0], [0.0, 1.0]])


class Conv:
    def __init__(self, size):
        self.size = size

    def forward(self, weights, images):
        """weights (out, in, k, k); images (n, in, h, w) -> (n, out, h - k + 1, w - k + 1)."""
        k = self.size
        rows, cols = images.shape[2] - k + 1, images.shape[3] - k + 1
        out = 0.0
        for i in range(k):
            for j in range(k):
                patch = images[:, :, i:i + rows, j:j + cols]
                out = out + np.einsum("nchw,oc->nohw", patch, weights[:, :, i, j])
        return np.tanh(out)


class Pool:
    def forward(self, images):
        n, c, h, w = images.shape
        blocks = images.reshape(n, c, h // 2, 2, w // 2, 2)
        return np.max(np.max(blocks, axis=5), axis=3)


def loss(params):
    hidden = Pool().forward(Conv(3).forward(params["kernel"], IMAGES))
    scores = hidden.reshape(len(IMAGES), -1) @ params["dense"]
    scores = scores - np.max(scores, axis=1, keepdims=True)
    log_probs = scores - np.log(np.sum(np.exp(scores), axis=1, keepdims=True))
    return -np.sum(log_probs * LABELS)


_RNG = np.random.default_rng(7)
ARGS = ({"kernel": _RNG.standard_normal((2, 1, 3, 3)) * 0.5, "dense": _RNG.standard_normal((8, 2)) * 0.5},)
WRT = 0
JAX = False  # the layers are classes, whose methods read NumPy from this module
