"""A chain of springs integrated with explicit Euler, tuned by gradient descent.

Four masses hang in a line from a wall, each joined to its neighbour by a
spring of stiffness ``k`` and rest length ``rest``. Starting at rest length,
the chain is launched with initial velocities ``v0``; explicit Euler
integrates it for ``steps`` steps of ``dt``. We want the last mass to end at
``target``, and find the launch velocities by gradient descent on

    loss(v0) = (x_last(T) - target)^2 + 1e-3 * |v0|^2

The gradient flows back through all 150 Euler steps. The script prints the
loss as it falls, the launch velocities it found, and the stiffness
sensitivity of the final loss (a gradient with respect to a scalar).
"""
import numpy as np

import adsrc

N = 4                      # masses
REST = 1.0                 # spring rest length
DT = 0.01                  # time step
STEPS = 150                # Euler steps (1.5 time units)
TARGET = N * REST + 0.5    # where the last mass should end up


def difference_matrix(n):
    """D @ x is each spring's length: x[0] - wall, x[1] - x[0], ..."""
    return np.eye(n) - np.eye(n, k=-1)


def simulate(v0, k, masses, D, dt, steps):
    """Positions of the masses after ``steps`` explicit Euler steps."""
    # Every spring starts at its rest length.
    x = np.cumsum(np.full(v0.shape, REST))
    v = v0
    for _ in range(steps):
        # Hooke's law, one tension per spring; each mass is pulled by its two springs.
        tension = k * (D @ x - REST)
        force = -(D.T @ tension)
        x = x + dt * v
        v = v + dt * force / masses
    return x


def loss(v0, k, masses, D):
    x = simulate(v0, k, masses, D, DT, STEPS)
    return (x[-1] - TARGET) ** 2 + 1e-3 * np.sum(v0 ** 2)


def optimize(iterations=40, learning_rate=0.5, k=20.0):
    """Gradient descent on the launch velocities; returns them and the loss history."""
    masses = np.linspace(1.0, 2.0, N)
    D = difference_matrix(N)
    v0 = np.zeros(N)
    step = adsrc.value_and_grad(loss, wrt="v0")
    history = []
    for _ in range(iterations):
        value, dv0 = step(v0, k, masses, D)
        history.append(float(value))
        v0 = v0 - learning_rate * dv0
    history.append(float(loss(v0, k, masses, D)))
    return v0, history


if __name__ == "__main__":
    v0, history = optimize()
    for i in range(0, len(history), 10):
        print(f"iteration {i:2d}  loss {history[i]:.6f}")
    assert history[-1] < 0.01 * history[0], "gradient descent did not lower the loss"
    print("launch velocities v0 =", np.array2string(v0, precision=4))
    masses, D = np.linspace(1.0, 2.0, N), difference_matrix(N)
    final = simulate(v0, 20.0, masses, D, DT, STEPS)
    print(f"last mass ends at {final[-1]:.4f} (target {TARGET})")
    dk = adsrc.grad(loss, wrt="k")(v0, 20.0, masses, D)
    print(f"d loss / d stiffness at the optimum = {dk:.6f}")
