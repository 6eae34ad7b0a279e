"""A fixed-step fourth-order Runge-Kutta integration of a damped oscillator whose dynamics a local
function defines; the loss compares the final state with a target.

Idea from: HIPS/autograd, examples/ode_net.py (fitting the parameters of an ODE by differentiating
through its integration).
"""
import numpy as np

TARGET = np.array([0.3, -0.4])


def loss(theta, state):
    def dynamics(y):
        position, velocity = y[0], y[1]
        return np.array([velocity, -theta[0] * position - theta[1] * velocity + theta[2] * np.sin(position)])

    dt = 0.1
    for _ in range(12):
        k1 = dynamics(state)
        k2 = dynamics(state + 0.5 * dt * k1)
        k3 = dynamics(state + 0.5 * dt * k2)
        k4 = dynamics(state + dt * k3)
        state = state + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum((state - TARGET) ** 2)


ARGS = (np.array([2.0, 0.3, 0.5]), np.array([1.0, 0.0]))
WRT = (0, 1)
