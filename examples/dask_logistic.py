"""The gradient of a logistic-regression loss over a chunked 2,000,000 x 50 design matrix, on a Dask cluster.

The loss is plain NumPy code. Given Dask arrays, adsrc's adjoint builds a Dask
graph for the gradient without computing anything; the cluster (a
LocalCluster of worker processes here, any dask.distributed cluster in
general) computes it chunk by chunk, with Dask's progress bar. The script
then gathers the data into one NumPy array, takes the same gradient with
NumPy, and checks that the two agree.

    python3 -m venv .venv && .venv/bin/python -m pip install ".[dask]" && .venv/bin/python examples/dask_logistic.py

Options: ``--rows`` (2,000,000), ``--chunk-rows`` (250,000), ``--workers`` (2),
``--no-check`` to skip the NumPy comparison (which needs the matrix in memory).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import adsrc

FEATURES = 50


def loss(w, X, y):
    """Mean logistic loss of the scores X @ w against labels y in {-1, +1}, plus a small ridge penalty."""
    z = X @ w
    return np.mean(np.logaddexp(0.0, -y * z)) + 1e-4 * np.sum(w * w)


def data(rows: int, chunk_rows: int):
    """A reproducible design matrix and labels, generated chunk by chunk on the workers."""
    import dask.array as da

    rng = da.random.default_rng(0)
    X = rng.standard_normal((rows, FEATURES), chunks=(chunk_rows, FEATURES))
    w_true = np.linspace(-1.0, 1.0, FEATURES)
    y = da.sign(X @ w_true + rng.standard_normal(rows, chunks=chunk_rows))
    return X, y


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-check", action="store_true", help="skip the comparison with NumPy")
    args = parser.parse_args(argv)

    from dask.distributed import Client, LocalCluster, progress

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        X, y = data(args.rows, args.chunk_rows)
        w = np.zeros(FEATURES)  # NumPy weights, Dask data: NumPy's dispatch makes the gradient a Dask array

        dw = adsrc.grad(loss)(w, X, y)  # builds the graph: nothing is computed yet
        print(f"X: {X.shape[0]:,} x {X.shape[1]} float64 ({X.nbytes / 2**20:,.0f} MiB) in "
              f"{X.npartitions} chunks; {len(cluster.workers)} worker processes")
        print(f"grad(loss)(w, X, y) is a lazy {type(dw).__module__}.{type(dw).__name__} of shape {dw.shape} "
              f"({len(dw.dask)} tasks)")

        started = time.perf_counter()
        future = client.compute(dw)
        progress(future)  # Dask's progress bar, in the terminal
        gradient = future.result()
        print(f"\ncomputed on the cluster in {time.perf_counter() - started:.1f} s")
        print("dloss/dw[:5] =", np.array2string(gradient[:5], precision=6))

        if not args.no_check:
            X_np, y_np = client.gather(client.compute([X, y]))
            expected = adsrc.grad(loss)(w, X_np, y_np)
            error = np.max(np.abs(gradient - expected))
            print(f"NumPy in memory gives the same gradient: max |difference| = {error:.2e}")
            assert np.allclose(gradient, expected, rtol=1e-9, atol=1e-12), "the Dask and NumPy gradients differ"


if __name__ == "__main__":
    main()
