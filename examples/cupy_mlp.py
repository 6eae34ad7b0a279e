"""The gradient of a two-layer network's loss on the GPU, with CuPy, checked against NumPy.

The loss is plain NumPy code. Given CuPy arrays, NumPy's functions dispatch
to CuPy, so adsrc's adjoint runs on the GPU unchanged and the gradients come
back as CuPy arrays, in the structure of the parameters (a dict).

    python3 -m venv .venv && .venv/bin/python -m pip install ".[cupy]" && .venv/bin/python examples/cupy_mlp.py

It needs CuPy and a CUDA GPU; without them it says what is missing and exits
with status 1.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import adsrc


def loss(params, X, Y):
    """Mean squared error of a tanh network with one hidden layer."""
    hidden = np.tanh(X @ params["W1"] + params["b1"])
    out = hidden @ params["W2"] + params["b2"]
    return np.mean((out - Y) ** 2)


def problem(n=4096, d=256, h=512, k=10, seed=0):
    """NumPy parameters and data."""
    rng = np.random.default_rng(seed)
    params = {"W1": rng.normal(size=(d, h)) / np.sqrt(d), "b1": np.zeros(h),
              "W2": rng.normal(size=(h, k)) / np.sqrt(h), "b2": np.zeros(k)}
    return params, rng.normal(size=(n, d)), rng.normal(size=(n, k))


def gradients_on(to_device, to_host, params, X, Y):
    """The loss and its gradient with the arrays moved by ``to_device``; returned on the host, with the
    type of the device gradients."""
    device_params = {name: to_device(value) for name, value in params.items()}
    value, grads = adsrc.value_and_grad(loss)(device_params, to_device(X), to_device(Y))
    kinds = {type(g).__module__.split(".")[0] + "." + type(g).__name__ for g in grads.values()}
    return float(to_host(value)), {name: to_host(g) for name, g in grads.items()}, kinds


def main() -> int:
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except ImportError:
        print("CuPy is not installed: .venv/bin/python -m pip install '.[cupy]' (the project's virtual "
              "environment, README.md) on a machine with a CUDA GPU")
        return 1
    except Exception as error:
        print(f"CuPy cannot reach a GPU: {error}")
        return 1
    params, X, Y = problem()
    started = time.perf_counter()
    value, grads, kinds = gradients_on(cupy.asarray, cupy.asnumpy, params, X, Y)
    cupy.cuda.Device().synchronize()
    print(f"loss {value:.6f}; gradients are {', '.join(sorted(kinds))}; "
          f"{time.perf_counter() - started:.3f} s on the GPU (compilation included)")
    expected_value, expected = adsrc.value_and_grad(loss)(params, X, Y)
    worst = max(float(np.max(np.abs(grads[k] - expected[k]))) for k in params)
    print(f"NumPy gives the same gradients: max |difference| = {worst:.2e}")
    assert np.isclose(value, expected_value) and all(np.allclose(grads[k], expected[k]) for k in params)
    return 0


if __name__ == "__main__":
    sys.exit(main())
