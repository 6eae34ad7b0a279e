"""One weight matrix used 512 times in a loop: the case lazy accumulation is for.

Every step sends an outer product back to W. adsrc's backward loop adds the
512 factor pairs to a stack and computes them as a few matrix products. Prints
the gradient (first row 512, the rest 0) and the adjoint that grad ran for it.
"""
import numpy as np

import adsrc


def f(W, x):
    return sum((W @ xi)[0] for xi in x)


if __name__ == "__main__":
    W = np.ones((10, 10))
    x = [np.ones(10) for _ in range(512)]
    dW = adsrc.grad(f)(W, x)
    print("dW =")
    print(dW)
    assert np.all(dW[0] == 512) and np.all(dW[1:] == 0)
    print()
    print(adsrc.adjoint_source(f, args=(W, x)))  # the adjoint grad ran: specialized for W and x's kinds
