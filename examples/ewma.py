"""An exponentially weighted moving average written into an array: writes run in place.

``s[t] = a * x[t] + (1 - a) * s[t - 1]`` writes one element per step. adsrc
runs each write in place, as Python does, and keeps on its tape only the
element the write overwrote; the backward sweep gives the written value its
part of the gradient and puts the old element back. The gradient is checked
against central finite differences, and the adjoint that ran is printed.
"""
import numpy as np

import adsrc


def ewma_loss(x, a):
    s = np.zeros(len(x))
    s[0] = x[0]
    for t in range(1, len(x)):
        s[t] = a * x[t] + (1 - a) * s[t - 1]
    return np.sum(s ** 2)


if __name__ == "__main__":
    x = np.sin(np.linspace(0.0, 3.0, 8))
    a = 0.3
    value, (dx, da) = adsrc.value_and_grad(ewma_loss, wrt=(0, 1))(x, a)
    eps = 1e-6
    fd_x = np.array([(ewma_loss(x + eps * e, a) - ewma_loss(x - eps * e, a)) / (2 * eps) for e in np.eye(len(x))])
    fd_a = (ewma_loss(x, a + eps) - ewma_loss(x, a - eps)) / (2 * eps)
    print("value =", value)
    print("dx =", dx)
    print("da =", da)
    assert value == ewma_loss(x, a)
    assert np.allclose(dx, fd_x, rtol=1e-6) and np.isclose(da, fd_a, rtol=1e-6)
    print()
    print(adsrc.adjoint_source(ewma_loss, wrt=(0, 1), args=(x, a)))  # the adjoint that ran
