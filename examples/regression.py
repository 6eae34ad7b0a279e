"""Linear regression with a norm penalty: f(w, x) = sum(w @ x) + ||w||.

Run it to print the gradient with respect to w and the adjoint that ran for it.
"""
import numpy as np

import adsrc


def f(w, x):
    return np.sum(w @ x) + np.linalg.norm(w)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    w = rng.normal(size=(2, 10))
    x = rng.normal(size=(10, 100))
    value, dw = adsrc.value_and_grad(f)(w, x)
    print(f"f(w, x) = {value:.6f}")
    print("df/dw =")
    print(np.array2string(dw, precision=4))
    print()
    print(adsrc.adjoint_source(f, args=(w, x)))  # the adjoint value_and_grad ran for these arguments
