"""Train a two-layer perceptron by gradient descent, with gradients from adsrc.

The network is y = W2 @ tanh(W1 @ x + b1) + b2, fitted to a noisy sine by
mean squared error. Its four parameters travel as one tuple, and
``adsrc.value_and_grad(loss, wrt="params")`` returns a gradient tuple of the
same structure. The script prints the loss every 50 steps and checks that
training lowered it.
"""
import numpy as np

import adsrc


def loss(params, X, Y):
    W1, b1, W2, b2 = params
    hidden = np.tanh(W1 @ X + b1)
    prediction = W2 @ hidden + b2
    return np.mean((prediction - Y) ** 2)


def init(rng, n_in=1, n_hidden=16, n_out=1):
    return (rng.normal(size=(n_hidden, n_in)), np.zeros((n_hidden, 1)),
            rng.normal(size=(n_out, n_hidden)) / np.sqrt(n_hidden), np.zeros((n_out, 1)))


def train(steps=300, learning_rate=0.1, seed=0):
    """Return the parameters and the loss at every step."""
    rng = np.random.default_rng(seed)
    X = np.linspace(-np.pi, np.pi, 64).reshape(1, -1)
    Y = np.sin(X) + 0.05 * rng.normal(size=X.shape)
    params = init(rng)
    step = adsrc.value_and_grad(loss, wrt="params")
    history = []
    for _ in range(steps):
        value, grads = step(params, X, Y)
        params = tuple(p - learning_rate * g for p, g in zip(params, grads))
        history.append(float(value))
    return params, history


if __name__ == "__main__":
    params, history = train()
    for i in range(0, len(history), 50):
        print(f"step {i:3d}  loss {history[i]:.5f}")
    print(f"step {len(history) - 1:3d}  loss {history[-1]:.5f}")
    assert history[-1] < 0.2 * history[0], "training did not lower the loss"
    print()
    print(adsrc.adjoint_source(loss, wrt="params"))
