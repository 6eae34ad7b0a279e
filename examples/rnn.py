"""A small recurrent network, differentiated through its loop over time.

    h = tanh(W @ h + U @ x_t + b)   for each step t
    loss = sum_t (V @ h - y_t)^2

The loop runs over the rows of ``xs``; adsrc records one tape entry per step
and its backward sweep walks them in reverse (backpropagation through time).
W and U are used at every step, so their gradients gather one contribution
per step in a single flat AccThunk. The script prints the loss and the
gradient norms, then the adjoint code that ran for these arguments.
"""
import numpy as np

import adsrc


def rnn_loss(W, U, b, V, xs, ys):
    h = np.zeros(W.shape[0])
    total = 0.0
    for x, y in zip(xs, ys):
        h = np.tanh(W @ h + U @ x + b)
        error = V @ h - y
        total = total + np.sum(error ** 2)
    return total


def make_problem(seed=0, n_hidden=8, n_in=3, n_out=2, steps=20):
    rng = np.random.default_rng(seed)
    W = 0.5 * rng.normal(size=(n_hidden, n_hidden)) / np.sqrt(n_hidden)
    U = rng.normal(size=(n_hidden, n_in)) / np.sqrt(n_in)
    b = np.zeros(n_hidden)
    V = rng.normal(size=(n_out, n_hidden)) / np.sqrt(n_hidden)
    xs = rng.normal(size=(steps, n_in))
    ys = rng.normal(size=(steps, n_out))
    return W, U, b, V, xs, ys


if __name__ == "__main__":
    W, U, b, V, xs, ys = make_problem()
    value, (dW, dU, db, dV) = adsrc.value_and_grad(rnn_loss, wrt=(0, 1, 2, 3))(W, U, b, V, xs, ys)
    print(f"loss = {value:.6f}")
    for name, g in [("W", dW), ("U", dU), ("b", db), ("V", dV)]:
        print(f"|dloss/d{name}| = {np.linalg.norm(g):.6f}  (shape {g.shape})")
    print()
    print(adsrc.adjoint_source(rnn_loss, wrt=(0, 1, 2, 3), args=(W, U, b, V, xs, ys)))  # the adjoint that ran
