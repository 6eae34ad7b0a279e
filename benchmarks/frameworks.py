"""autograd, jax (eager and jit) and torch, run on the same workload code.

The workloads only reach NumPy through their global ``np``; each framework
gets the identical code object with ``np`` bound to its own NumPy-like module
(``autograd.numpy``, ``jax.numpy``, or the small torch shim below). So all
systems differentiate literally the same user code.

Every framework is optional (``.venv/bin/python -m pip install -e ".[bench]"``): a missing one makes
its column ``n/a``, never an error.
"""
from __future__ import annotations

import time
import types

import numpy as np

from .systems import Prepared, Unavailable, fresh_function

# jax.jit traces Python loops by unrolling them; past this many iterations the
# compile alone takes minutes (45 s at 10k was measured), so the cell is skipped.
# Op-by-op jax is skipped there too: about 1.3 ms per iteration here, so a
# 100k-iteration loop takes minutes per call and would dominate the whole run.
JAX_MAX_TRIPS = 10_000


def _need(module):
    try:
        return __import__(module, fromlist=["_"])
    except Exception as e:
        raise Unavailable(f"{module} not installed ({type(e).__name__})") from None


def autograd_grad(wl, args):
    ag = _need("autograd")
    anp = _need("autograd.numpy")
    g = ag.grad(fresh_function(wl.f, anp), argnum=wl.wrt)
    return Prepared(call=lambda: g(*args))


def _jax():
    jax = _need("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, _need("jax.numpy")


def _to_jax(jnp, a):
    if isinstance(a, np.ndarray):
        return jnp.asarray(a)
    if isinstance(a, list):
        return [_to_jax(jnp, x) for x in a]
    return a  # Python float or int


def _jax_system(jit):
    def prepare(wl, args):
        jax, jnp = _jax()
        trips = wl.trips(args)
        if trips > JAX_MAX_TRIPS:
            raise Unavailable(
                f"skipped: jax.jit would unroll {trips:,} loop iterations" if jit else
                f"skipped: op-by-op jax would take minutes for {trips:,} loop iterations")
        jargs = tuple(_to_jax(jnp, a) for a in args)
        static = tuple(i for i, a in enumerate(args) if isinstance(a, int))

        def build():
            g = jax.grad(fresh_function(wl.f, jnp), argnums=wl.wrt)
            return jax.jit(g, static_argnums=static) if jit else g

        def transform(warm_s):
            # jit's cost grows with the unrolled trace, so use the real inputs.
            t0 = time.perf_counter()
            jax.block_until_ready(build()(*jargs))
            return max(0.0, time.perf_counter() - t0 - warm_s)

        g = build()
        return Prepared(call=lambda: jax.block_until_ready(g(*jargs)),
                        transform=transform if jit else None, traced=False)

    return prepare


def _torch_np(torch):
    """Just the NumPy names the workloads use, mapped to torch."""
    return types.SimpleNamespace(
        sum=torch.sum, mean=torch.mean, tanh=torch.tanh, sin=torch.sin,
        linalg=types.SimpleNamespace(norm=torch.linalg.norm),
    )


def torch_grad(wl, args):
    torch = _need("torch")
    torch.set_num_threads(1)

    def conv(a):
        if isinstance(a, np.ndarray):
            return torch.from_numpy(a.copy())
        if isinstance(a, list):
            return [conv(x) for x in a]
        if isinstance(a, float):
            return torch.tensor(a, dtype=torch.float64)
        return a

    targs = tuple(conv(a) for a in args)
    leaves = [targs[i].requires_grad_(True) for i in wl.wrt]
    f = fresh_function(wl.f, _torch_np(torch))
    return Prepared(call=lambda: torch.autograd.grad(f(*targs), leaves), traced=False)


FRAMEWORKS = {
    "autograd": autograd_grad,
    "jax": _jax_system(jit=False),
    "jax-jit": _jax_system(jit=True),
    "torch": torch_grad,
}
